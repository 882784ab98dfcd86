// When a change of the gateway's records notifies: only when the payment names a notify_url.
// Without one nothing of notify/ runs, not even the payload's building (a card payment's path
// stays off it: docs/architecture.md). What each event says is notify/events.ts's.
import type { Refund, Transaction } from "../domain/types.js";
import { paymentEvent, refundEvent, type Emitting } from "../notify/events.js";
import type { NotifyBehaviour } from "../notify/notifier.js";

export function notifyPayment(deps: Emitting, tx: Transaction, event?: string, notify?: NotifyBehaviour): void {
  if (tx.notify_url) deps.notifier.emit(paymentEvent(tx, deps.store.records, event, notify), deps.store);
}

export function notifyRefund(deps: Emitting, refund: Refund, tx: Transaction | undefined, notify?: NotifyBehaviour): void {
  if (tx?.notify_url) deps.notifier.emit(refundEvent(refund, tx, notify), deps.store);
}

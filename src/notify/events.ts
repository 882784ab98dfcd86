// What each kind of change notifies: the event name and the data, which is what the merchant
// sees for that resource elsewhere (a payment: its transaction query element; a refund: its
// refund search element), plus account_id.
import type { Store } from "../store/store.js";
import { codes } from "../domain/codes.js";
import { foundElement, subscriptionResult } from "../render/query-element.js";
import { refundElement } from "../render/refund-element.js";
import type { Refund, Subscription, Transaction } from "../domain/types.js";
import type { Repository } from "../domain/records.js";
import type { NotificationEvent, Notifier, NotifyBehaviour } from "./notifier.js";

/** What emitting needs: the notifier, and the records a payment's element reads (its subscription). */
export interface Emitting {
  notifier: Pick<Notifier, "emit">;
  store: Pick<Store, "records" | "ids">;
}

/** What a subscription's change notifies. */
export type SubscriptionEvent =
  "subscription.deducted" | "subscription.deduction_failed" | "subscription.suspended" | "subscription.finished" | "subscription.cancelled";

/** payment.<state> by default: payment.authorised, .paid, .declined, .pending, .review, ... */
export function paymentEvent(
  tx: Transaction,
  records: Pick<Repository, "subscription">,
  event = `payment.${tx.state}`,
  notify?: NotifyBehaviour,
): NotificationEvent {
  return { merchantId: tx.merchant_id, url: tx.notify_url, event, data: { account_id: tx.account_id, ...foundElement(tx, records) }, notify };
}

/** refund.accepted, refund.processed or refund.failed, to the payment's notify_url. */
export function refundEvent(refund: Refund, tx: Transaction | undefined, notify?: NotifyBehaviour): NotificationEvent {
  return {
    merchantId: refund.merchant_id,
    url: tx?.notify_url ?? "",
    event: `refund.${refund.state}`,
    data: { account_id: refund.account_id, ...refundElement(refund, tx) },
    notify,
  };
}

/**
 * A subscription's change, to the first payment's notify_url. A deduction is described like any
 * payment (its transaction query element); any other change by the subscription itself: its ids,
 * recurring_status and subscription_result.
 */
export function subscriptionEvent(
  records: Repository,
  sub: Subscription,
  event: SubscriptionEvent,
  deduction?: Transaction,
  notify?: NotifyBehaviour,
): NotificationEvent {
  if (deduction) return paymentEvent(deduction, records, event, notify);
  const first = records.transaction(sub.transaction_id);
  const data = {
    merchant_id: sub.merchant_id,
    account_id: sub.account_id,
    order_no: sub.order_no,
    recurring_id: sub.recurring_id,
    recurring_status: codes.recurring_status[sub.state],
    subscription_result: subscriptionResult(sub),
  };
  return { merchantId: sub.merchant_id, url: first?.notify_url ?? "", event, data, notify };
}

// Time-driven changes: whatever is due by `now` happens before anything reads or writes state.
// Called by every gateway request, by the operator API, and by a timer while the server runs.
// The domain makes the changes; this is where they are turned into notifications.
import type { Deps } from "../deps/deps.js";
import { unitDeps } from "../store/store.js";
import type { Ids } from "../domain/ids.js";
import type { Repository } from "../domain/records.js";
import { refundEvent, subscriptionEvent } from "../notify/events.js";
import { settleDueRefunds } from "../domain/lifecycle.js";
import { notifyPayout } from "../notify/payout-notice.js";
import { settleDuePayouts } from "../domain/payout-rules.js";
import { deductDue, type TimeEffects } from "./subscriptions.js";

/** Applies everything due by `now`; returns how many records changed. `effects`: the scenario and notifier (Deps has both). */
export function catchUp(records: Repository, now: Date, ids: Ids, effects: TimeEffects): number {
  // each kind's rules are called only when its queue has something due: a card payment with nothing
  // due runs no refund, subscription or payout code
  let changed = 0;
  if (records.mayBeDue(now, "refunds"))
    changed += settleDueRefunds(records, now, ids, (r, tx) => {
      records.changed("refunds", r);
      if (tx) records.changed("transactions", tx);
      if (tx?.notify_url) effects.notifier.emit(refundEvent(r, tx, r.notify), { records, ids });
    });
  if (records.mayBeDue(now, "subscriptions"))
    changed += deductDue(records, now, ids, effects, (sub, event, deduction, notify) => {
      records.changed("subscriptions", sub);
      effects.notifier.emit(subscriptionEvent(records, sub, event, deduction, notify), { records, ids });
    });
  if (records.mayBeDue(now, "payouts"))
    changed += settleDuePayouts(records, now, (p) => {
      records.changed("payouts", p);
      notifyPayout(p, effects.notifier, { records, ids }, p.notify);
    });
  return changed;
}

/** Applies what fell due on the sandbox clock and saves it (before an operator reads or acts, and on the server's timer); returns how many records changed. */
export async function bringUpToDate(deps: Deps): Promise<number> {
  const changed = catchUp(deps.store.records, deps.clock.now(), deps.store.ids, deps);
  if (changed) await deps.store.commit();
  return changed;
}

/** Applies what fell due everywhere: one unit per merchant with due work (with a shared store), or one for all. */
export async function applyDue(deps: Deps): Promise<number> {
  let changed = 0;
  for (const scope of await deps.store.dueScopes(deps.clock.now())) changed += await deps.store.unit((store) => bringUpToDate(unitDeps(deps, store)), scope);
  return changed;
}

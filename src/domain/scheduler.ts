// Time-driven changes: whatever is due by `now` happens before anything reads or writes state.
// Called by every gateway request, by the operator API, and by a timer while the server runs.
import type { Ids } from "../ids.js";
import type { State } from "../store/types.js";
import { refundEvent } from "../notify/events.js";
import { settleDueRefunds } from "./lifecycle.js";
import { settleDuePayouts } from "./payout.js";
import { deductDue, type TimeEffects } from "./subscriptions.js";

/** Applies everything due by `now`; returns how many records changed. `effects`: the scenario and notifier (Deps has both). */
export function catchUp(state: State, now: Date, ids: Ids, effects: TimeEffects): number {
  let changed = settleDueRefunds(state.refunds, state.transactions, now, ids, (r, tx) => effects.notifier.emit(refundEvent(r, tx, r.notify)));
  changed += deductDue(state, now, ids, effects);
  changed += settleDuePayouts(state.payouts, now, effects.notifier);
  return changed;
}

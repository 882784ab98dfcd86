// Time-driven changes: whatever is due by `now` happens before anything reads or writes state.
// Called by every gateway request, by the operator API, and by a timer while the server runs.
import type { Ids } from "../ids.js";
import type { State } from "../store/types.js";
import { settleDueRefunds } from "./lifecycle.js";

/** Applies everything due by `now`; returns how many records changed. */
export function catchUp(state: State, now: Date, ids: Ids): number {
  return settleDueRefunds(state.refunds, state.transactions, now, ids);
}

// A transaction's history: every request and state change that touched it, with the rule that
// decided it. Kept on the transaction, oldest first, capped so a long-lived payment stays small;
// its texts come from the pool records repeat (domain/text-pool.ts), which history lines are the most of.
import { codes, type PaymentState } from "./codes.js";
import { isoOf } from "./dates.js";
import { intern } from "./text-pool.js";
import type { HistoryEntry, Transaction } from "./types.js";

const HISTORY_LIMIT = 50;

type NewEntry = Omit<HistoryEntry, "at" | "payment_status">;

/** One history line for a payment now in `state`; `at` is the ISO time (pass the payment's own string to share it). */
export function historyEntry(state: PaymentState, at: string, entry: NewEntry): HistoryEntry {
  return {
    at,
    payment_status: codes.payment_status[state],
    event: intern(entry.event),
    result: intern(entry.result),
    rule: intern(entry.rule),
    source: entry.source,
    // always present (undefined when none), so every line has one shape; JSON leaves it out
    request_id: entry.request_id,
  };
}

export function recordHistory(tx: Transaction, now: Date, entry: NewEntry): void {
  const line = historyEntry(tx.state, isoOf(now), entry);
  // a one-line list is made to measure: most payments never get a second line
  if (!tx.history) tx.history = [line];
  else tx.history.push(line);
  if (tx.history.length > HISTORY_LIMIT) tx.history.splice(0, tx.history.length - HISTORY_LIMIT);
}

// A transaction's history: every request and state change that touched it, with the rule that
// decided it. Kept on the transaction, oldest first, capped so a long-lived payment stays small.
import { codes } from "../codes.js";
import type { HistoryEntry, Transaction } from "../store/types.js";

export const HISTORY_LIMIT = 50;

export function recordHistory(tx: Transaction, now: Date, entry: Omit<HistoryEntry, "at" | "payment_status">): void {
  const history = (tx.history ??= []);
  history.push({ at: now.toISOString(), payment_status: codes.payment_status[tx.state], ...entry });
  if (history.length > HISTORY_LIMIT) history.splice(0, history.length - HISTORY_LIMIT);
}

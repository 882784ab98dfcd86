// A transaction's history: every request and state change that touched it, with the rule that
// decided it. Kept on the transaction, oldest first, capped so a long-lived payment stays small.
import { codes } from "../codes.js";
import type { HistoryEntry, Transaction } from "../store/types.js";

export const HISTORY_LIMIT = 50;

/** The texts of history lines repeat (events, results, rules): one copy of each, for a bounded number of texts. */
const texts = new Map<string, string>();
const TEXT_LIMIT = 10_000;
function intern(text: string): string {
  const known = texts.get(text);
  if (known !== undefined) return known;
  if (texts.size < TEXT_LIMIT) texts.set(text, text);
  return text;
}

export function recordHistory(tx: Transaction, now: Date, entry: Omit<HistoryEntry, "at" | "payment_status">): void {
  const history = (tx.history ??= []);
  history.push({
    at: now.toISOString(),
    payment_status: codes.payment_status[tx.state],
    event: intern(entry.event),
    result: intern(entry.result),
    rule: intern(entry.rule),
    source: entry.source,
    ...(entry.request_id ? { request_id: entry.request_id } : {}),
  });
  if (history.length > HISTORY_LIMIT) history.splice(0, history.length - HISTORY_LIMIT);
}

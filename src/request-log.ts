// What each request did, for testers: signed fields, signing string (key masked), expected and
// received signature, whether they matched, and the outcome. Kept in memory, newest last.
import type { SignatureCheck } from "./signature/signature.js";

export interface RequestLogEntry {
  id: string;
  at: string;
  operation: string;
  path: string;
  ip: string;
  merchant_id: string;
  account_id: string;
  order_no: string;
  http_status: number;
  result: string;
  rule: string;
  signature: Omit<SignatureCheck, "signature"> & { expected: string } | null;
}

export interface RequestLog {
  /** A fresh request id (X-Request-Id): req-1, req-2, ... per sandbox */
  nextId(): string;
  add(entry: RequestLogEntry): void;
  list(filter: { merchant_id?: string; order_no?: string; limit?: number }): RequestLogEntry[];
}

export function createRequestLog(capacity = 5000): RequestLog {
  const entries: RequestLogEntry[] = [];
  let counter = 0;
  return {
    nextId: () => `req-${++counter}`,
    add(entry) {
      entries.push(entry);
      if (entries.length > capacity) entries.splice(0, entries.length - capacity);
    },
    list({ merchant_id, order_no, limit = 100 }) {
      return entries
        .filter((e) => (merchant_id === undefined || e.merchant_id === merchant_id) && (order_no === undefined || e.order_no === order_no))
        .slice(-limit);
    },
  };
}

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
  /** what the answer does not say, e.g. a payout's source_amount that disagrees with the FX rate */
  note?: string;
  signature: Omit<SignatureCheck, "signature"> & { expected: string } | null;
}

/** An IPv4 caller as it is written everywhere else ("::ffff:127.0.0.1" → "127.0.0.1"). */
export const normaliseIp = (ip: string) => ip.replace(/^::ffff:/, "");

export interface RequestLog {
  /** A fresh request id (X-Request-Id): req-1, req-2, ... per sandbox */
  nextId(): string;
  add(entry: RequestLogEntry): void;
  list(filter: { merchant_id?: string; order_no?: string; limit?: number }): RequestLogEntry[];
}

/** The log keeps the most recent entries only: a day-long run stays the same size. */
export const REQUEST_LOG_CAPACITY = 5000;

export function createRequestLog(capacity = REQUEST_LOG_CAPACITY): RequestLog {
  // a ring: adding overwrites the oldest entry, at constant cost
  const ring: (RequestLogEntry | undefined)[] = new Array<RequestLogEntry | undefined>(capacity);
  let next = 0;
  let counter = 0;
  return {
    nextId: () => `req-${++counter}`,
    add(entry) {
      ring[next] = entry;
      next = (next + 1) % capacity;
    },
    /** matching entries, oldest first, at most `limit` (the most recent ones) */
    list({ merchant_id, order_no, limit = 100 }) {
      const out: RequestLogEntry[] = [];
      for (let i = 1; i <= capacity && out.length < limit; i++) {
        const e = ring[(next - i + capacity) % capacity];
        if (!e) break;
        if ((merchant_id === undefined || e.merchant_id === merchant_id) && (order_no === undefined || e.order_no === order_no)) out.push(e);
      }
      return out.reverse();
    },
  };
}

// What each request did, for testers: signed fields, signing string (key masked), expected and
// received signature, whether they matched, and the outcome. Kept in memory, newest last.
import type { SignatureCheck } from "../domain/signature.js";

export interface RequestLogEntry {
  id: string;
  at: string;
  operation: string;
  path: string;
  ip: string;
  merchant_id: string;
  account_id: string;
  /** the order the request names; a batch's first order */
  order_no: string;
  /** a batch that names more than one order: each (the first ORDERS_LOGGED), found by any of them */
  order_nos?: string[];
  http_status: number;
  result: string;
  rule: string;
  /** what the answer does not say, e.g. a payout's source_amount that disagrees with the FX rate */
  note?: string;
  signature: (Omit<SignatureCheck, "signature"> & { expected: string }) | null;
}

/** The orders of one batch the log names its request by (a batch may hold hundreds). */
export const ORDERS_LOGGED = 50;

/** An IPv4 caller as it is written everywhere else ("::ffff:127.0.0.1" → "127.0.0.1"). */
export const normaliseIp = (ip: string) => ip.replace(/^::ffff:/, "");

/** What travelled on the wire, kept for the most recent requests only (the HAR export shows it). */
export interface Exchange {
  method: string;
  url: string;
  /** the request's headers that shape the answer (content-type, accept, x-sandbox-scenario, ...) */
  requestHeaders: [string, string][];
  requestType: string;
  /**
   * the body's text when it was read ("" when it was refused as unreadable), parsed again only when
   * shown, with card numbers and security codes masked: one string per request kept, where the
   * parsed object was dozens of them
   */
  body: string;
  status: number;
  responseHeaders: [string, string][];
  responseType: string;
  responseBody: string;
  duration_ms: number;
}

export interface RequestFilter {
  merchant_id?: string | undefined;
  order_no?: string | undefined;
  /** the operation's name: authorise, capture, retrievalTrans, ... */
  operation?: string | undefined;
  /** an HTTP status (403) or a class (4xx) */
  http_status?: string | undefined;
  /** ISO times, inclusive */
  since?: string | undefined;
  until?: string | undefined;
  limit?: number;
}

export interface RequestLog {
  /** A fresh request id (X-Request-Id): req-1, req-2, ... per sandbox (req-<replica>-1, ... with a shared store) */
  nextId(): string;
  add(entry: RequestLogEntry, exchange?: Exchange): void;
  /**
   * With a shared store: this replica's ids carry its tag, and what it logs is handed to `publish`
   * (which sends it to the other replicas), an exchange only up to SHARED_EXCHANGE_BYTES; what
   * they log arrives through addShared.
   */
  share(tag: string, publish: (entry: RequestLogEntry, exchange: Exchange | undefined) => void): void;
  addShared(entry: RequestLogEntry, exchange?: Exchange): void;
  list(filter: RequestFilter): RequestLogEntry[];
  /** what went over the wire for a listed request, while it is among the most recent EXCHANGE_CAPACITY */
  exchange(id: string): Exchange | undefined;
}

/** The log keeps the most recent entries only: a day-long run stays the same size. */
export const REQUEST_LOG_CAPACITY = 5000;
/** Of those, the most recent keep their bodies and headers too (for the HAR export). */
const EXCHANGE_CAPACITY = 1000;
/**
 * The bytes each ring may take at most, outside the JS heap: the entries (as JSON, ~700 bytes for a
 * single payment's) and the exchanges (their texts, ~1.5 KB for a single payment's). For those the
 * counts bind, with ~4x and ~10x room; large batches keep fewer exchanges (one that may take more
 * than the whole is not kept).
 */
const REQUEST_LOG_BYTES = 16 * 1024 * 1024;
const EXCHANGE_BYTES = 16 * 1024 * 1024;
/**
 * With a shared store, the largest exchange (the length of its texts) handed to the other
 * replicas: the shared log is a Redis stream capped by count (REQUEST_LOG_CAPACITY), so this bounds
 * its bytes (~80 MB at most, where 1 MB bodies could have made it gigabytes); a larger one stays
 * with the replica that served it. A capture of 50 orders takes ~16 KB.
 */
const SHARED_EXCHANGE_BYTES = 16 * 1024;

/** Which requests keep their bodies, as the HAR export and the dashboard say it. */
export const EXCHANGES_KEPT = `the ${EXCHANGE_CAPACITY.toLocaleString("en")} most recent requests (fewer when their bodies take more than ${EXCHANGE_BYTES / 2 ** 20} MB)`;

/** What is wrong with a filter's times (an unreadable since/until), to refuse it; undefined when fine. */
export function filterProblem(f: RequestFilter): string | undefined {
  const bad = (["since", "until"] as const).find((k) => f[k] !== undefined && Number.isNaN(Date.parse(f[k]!)));
  return bad && `${bad} must be an ISO date-time such as 2026-11-24T10:00:00Z`;
}

/** The filter as one test; a bad value (an unreadable time, a status that is not one) matches nothing. */
function matcher(f: RequestFilter): (e: RequestLogEntry) => boolean {
  const status = f.http_status?.toLowerCase();
  const statusOk = (s: number) => status === undefined || (/^[1-5]xx$/.test(status) ? String(s)[0] === status[0] : String(s) === status);
  const since = f.since === undefined ? -Infinity : Date.parse(f.since);
  const until = f.until === undefined ? Infinity : Date.parse(f.until);
  return (e) => {
    if (f.merchant_id !== undefined && e.merchant_id !== f.merchant_id) return false;
    if (f.order_no !== undefined && e.order_no !== f.order_no && !e.order_nos?.includes(f.order_no)) return false;
    if (f.operation !== undefined && e.operation !== f.operation) return false;
    if (!statusOk(e.http_status)) return false;
    const at = Date.parse(e.at);
    return at >= since && at <= until;
  };
}

/** An exchange as the texts the ring keeps: its fields in order, then its headers as name, value, ... */
function exchangeFields(x: Exchange): string[] {
  const fields = [
    x.method,
    x.url,
    x.requestType,
    x.body,
    String(x.status),
    x.responseType,
    x.responseBody,
    String(x.duration_ms),
    String(x.requestHeaders.length),
  ];
  for (const [name, value] of x.requestHeaders) fields.push(name, value);
  for (const [name, value] of x.responseHeaders) fields.push(name, value);
  return fields;
}

function exchangeOfFields(f: string[]): Exchange {
  const pairs = (from: number, to: number) => {
    const out: [string, string][] = [];
    for (let i = from; i + 1 < to; i += 2) out.push([f[i]!, f[i + 1]!]);
    return out;
  };
  const requestHeadersEnd = 9 + 2 * Number(f[8]);
  return {
    method: f[0]!,
    url: f[1]!,
    requestHeaders: pairs(9, requestHeadersEnd),
    requestType: f[2]!,
    body: f[3]!,
    status: Number(f[4]),
    responseHeaders: pairs(requestHeadersEnd, f.length),
    responseType: f[5]!,
    responseBody: f[6]!,
    duration_ms: Number(f[7]),
  };
}

/**
 * Entries (as JSON) and exchanges (as their texts) are kept in byte rings outside the JS heap (see
 * TextRing, below) and read back when listed: a request adds bytes there, not dozens of objects to the heap.
 */
export function createRequestLog(
  capacity = REQUEST_LOG_CAPACITY,
  exchangeCapacity = EXCHANGE_CAPACITY,
  bytes = { entries: REQUEST_LOG_BYTES, exchanges: EXCHANGE_BYTES },
): RequestLog {
  const entries = new TextRing(capacity, bytes.entries);
  const exchanges = new TextRing(exchangeCapacity, bytes.exchanges);
  // where each kept exchange is, by request id; an id whose exchange was dropped is forgotten when
  // the id exchangeCapacity requests later takes its place
  const exchangeOf = new Map<string, number>();
  const exchangeIds: (string | undefined)[] = new Array<string | undefined>(exchangeCapacity);
  let counter = 0;
  let idPrefix = "req-";
  let publish: ((entry: RequestLogEntry, exchange: Exchange | undefined) => void) | undefined;
  /** Keeps the entry and its exchange; answers the exchange's texts as kept. */
  function keep(entry: RequestLogEntry, exchange: Exchange | undefined): string[] | undefined {
    entries.push([JSON.stringify(entry)]);
    if (!exchange) return undefined;
    const fields = exchangeFields(exchange);
    const seq = exchanges.push(fields);
    const slot = seq % exchangeCapacity;
    const oldest = exchangeIds[slot];
    if (oldest !== undefined) exchangeOf.delete(oldest);
    exchangeIds[slot] = entry.id;
    exchangeOf.set(entry.id, seq);
    return fields;
  }
  return {
    nextId: () => `${idPrefix}${++counter}`,
    add(entry, exchange) {
      const fields = keep(entry, exchange);
      if (!publish) return;
      let size = 0;
      for (const field of fields ?? []) size += field.length;
      publish(entry, size <= SHARED_EXCHANGE_BYTES ? exchange : undefined);
    },
    share(tag, send) {
      idPrefix = `req-${tag}-`;
      publish = send;
    },
    addShared: keep,
    /** matching entries, oldest first, at most `limit` (the most recent ones) */
    list(filter) {
      const { limit = 100 } = filter;
      const matches = matcher(filter);
      // an entry whose JSON lacks a wanted value as JSON text cannot match: it is not parsed
      const needles = [filter.merchant_id, filter.order_no, filter.operation].flatMap((v) => (v === undefined ? [] : [JSON.stringify(v)]));
      const out: RequestLogEntry[] = [];
      const newest = entries.newest();
      for (let seq = newest; seq > newest - capacity && seq >= 0 && out.length < limit; seq--) {
        const text = entries.get(seq)?.[0];
        if (text === undefined || !needles.every((n) => text.includes(n))) continue;
        const e = JSON.parse(text) as RequestLogEntry;
        if (matches(e)) out.push(e);
      }
      return out.reverse();
    },
    exchange(id) {
      const seq = exchangeOf.get(id);
      const fields = seq === undefined ? undefined : exchanges.get(seq);
      return fields && exchangeOfFields(fields);
    },
  };
}

// Records of texts kept outside the JavaScript heap, the newest overwriting the oldest: a fixed byte
// buffer used as a ring. A record is a list of strings, each written as its UTF-8 bytes after its
// length (no JSON escaping of bodies that are JSON themselves). The request log keeps what it holds
// here, so a busy server's last few thousand requests are not objects the garbage collector
// promotes, scans and drops over and over (with 100,000 payments stored that churn doubled the cost
// of every young collection and the number of full ones). Pages of the buffer become resident only
// as they are written.

export class TextRing {
  private readonly bytes: Buffer;
  /** per slot: where its record starts, on a byte line that only grows (position % capacity in the buffer) */
  private readonly starts: Float64Array;
  /** per slot: its length in bytes (-1: too large to keep) */
  private readonly lengths: Int32Array;
  /** where the next record goes, on the same line */
  private head = 0;
  /** records pushed so far; the next one's sequence number */
  private pushed = 0;

  /** At most `slots` records, together at most `capacity` bytes. */
  constructor(
    private readonly slots: number,
    private readonly capacity: number,
  ) {
    this.bytes = Buffer.allocUnsafeSlow(capacity);
    this.starts = new Float64Array(slots);
    this.lengths = new Int32Array(slots);
  }

  /** Keeps a record (dropping the oldest ones as needed); its sequence number: 0, 1, 2, ... */
  push(fields: readonly string[]): number {
    const seq = this.pushed++;
    const slot = seq % this.slots;
    // at most 3 bytes of UTF-8 per UTF-16 unit, and 4 for each length
    let most = 4;
    for (const field of fields) most += 4 + 3 * field.length;
    if (most > this.capacity) {
      this.starts[slot] = this.head;
      this.lengths[slot] = -1;
      return seq;
    }
    let at = this.head % this.capacity;
    // back to the buffer's start when the record may not fit before its end, or as soon as the room
    // there, before the oldest record still counted, is as large as what the counted records take
    // (they are all between it and here, written since the last wrap) and this one: the bytes
    // written then stay about twice what those records take, not the whole capacity, and records up
    // to twice as large as those reach them only once they are no longer counted
    const oldest = this.oldestIntact();
    if (at + most > this.capacity || (oldest !== undefined && oldest < at && oldest >= at - oldest + most)) {
      this.head += this.capacity - at;
      at = 0;
    }
    let end = this.bytes.writeUInt32LE(fields.length, at);
    for (const field of fields) {
      const length = this.bytes.write(field, end + 4);
      this.bytes.writeUInt32LE(length, end);
      end += 4 + length;
    }
    this.starts[slot] = this.head;
    this.lengths[slot] = end - at;
    this.head += end - at;
    return seq;
  }

  /** The record pushed as `seq`, while it is kept: among the last `slots` and not written over since. */
  get(seq: number): string[] | undefined {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.pushed || seq < this.pushed - this.slots) return undefined;
    const slot = seq % this.slots;
    const length = this.lengths[slot]!;
    const start = this.starts[slot]!;
    // later records have reached its bytes once the line has moved a whole capacity past its start
    if (length < 0 || this.head - start > this.capacity) return undefined;
    let at = start % this.capacity;
    const fields: string[] = new Array<string>(this.bytes.readUInt32LE(at));
    at += 4;
    for (let i = 0; i < fields.length; i++) {
      const bytes = this.bytes.readUInt32LE(at);
      fields[i] = this.bytes.toString("utf8", at + 4, at + 4 + bytes);
      at += 4 + bytes;
    }
    return fields;
  }

  /** The newest record's sequence number (-1 before the first). */
  newest(): number {
    return this.pushed - 1;
  }

  /** where the oldest record still counted starts in the buffer, if it has not been written over */
  private oldestIntact(): number | undefined {
    const oldest = this.pushed - this.slots;
    if (oldest < 0) return undefined;
    const start = this.starts[oldest % this.slots]!;
    return this.head - start > this.capacity ? undefined : start % this.capacity;
  }
}

// The byte ring the request log keeps its texts in (src/store/text-ring.ts): a record read back is the
// one pushed, whole, or nothing; the last `slots` records, of sizes within 2x of each other, are
// all there while they fit with room to spare. And the request log reads back what it was given.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { TextRing } from "../src/store/request-log.js";
import { createRequestLog, type Exchange, type RequestLogEntry } from "../src/store/request-log.js";

// texts of one-, two-, three- and four-byte characters, so byte lengths differ from string lengths
const text = (maxLength: number) => fc.string({ unit: fc.constantFrom("a", "Z", "é", "€", "😀", '"'), maxLength });

/** what a record may take: 4 bytes for the count, 4 for each length, at most 3 bytes a UTF-16 unit */
const most = (fields: string[]) => 4 + fields.reduce((n, f) => n + 4 + 3 * f.length, 0);

describe("text ring", () => {
  test("a record read back is the one pushed, whole, or none; the newest is there when the ring can hold it", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 160 }),
        fc.array(fc.array(text(12), { maxLength: 3 }), { maxLength: 60 }),
        (slots, capacity, records) => {
          const ring = new TextRing(slots, capacity);
          records.forEach((r, i) => {
            expect(ring.push(r)).toBe(i);
            expect(ring.newest()).toBe(i);
            expect(ring.get(i)).toEqual(most(r) <= capacity ? r : undefined);
            for (let seq = -1; seq <= i + 1; seq++) {
              const read = ring.get(seq);
              if (read !== undefined) expect(read).toEqual(records[seq]);
              if (seq <= i - slots) expect(read).toBeUndefined();
            }
          });
        },
      ),
    );
  });

  test("records whose sizes vary by up to 2x: the last `slots` are all kept while they may take at most half the ring", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 32 }),
        fc.array(fc.double({ min: 1, max: 2, noNaN: true }), { minLength: 1, maxLength: 400 }),
        fc.integer({ min: 1, max: 8192 }),
        (slots, size, factors, capacity) => {
          // three-byte characters: a record takes all the room it may, which is when it is hardest to keep
          const record = (i: number) => ["€₤₹"[i % 3]!.repeat(Math.round(size * factors[i]!)), "é"];
          fc.pre(slots * most(["€".repeat(2 * size), "é"]) <= capacity / 2);
          const ring = new TextRing(slots, capacity);
          factors.forEach((_, i) => {
            ring.push(record(i));
            for (let seq = Math.max(0, i - slots + 1); seq <= i; seq++) expect(ring.get(seq)).toEqual(record(seq));
          });
        },
      ),
    );
  });

  test("a step from small records to records twice their size keeps the last `slots` too, wherever it comes", () => {
    for (let slots = 2; slots <= 12; slots++) {
      for (let step = slots; step < 4 * slots; step++) {
        const record = (i: number) => ["€₤₹"[i % 3]!.repeat(i < step ? 20 : 40)];
        const ring = new TextRing(slots, 2 * slots * most(record(step)));
        for (let i = 0; i < step + 3 * slots; i++) {
          ring.push(record(i));
          for (let seq = Math.max(0, i - slots + 1); seq <= i; seq++) expect(ring.get(seq)).toEqual(record(seq));
        }
      }
    }
  });
});

describe("request log bytes", () => {
  const entry = (n: number): RequestLogEntry => ({
    id: `req-${n}`,
    at: new Date(n * 1000).toISOString(),
    operation: "capture",
    path: "/v1/capture",
    ip: "127.0.0.1",
    merchant_id: "M1",
    account_id: "A1",
    order_no: `O-${n}`,
    http_status: 200,
    result: "0000:Success",
    rule: "default/visa-approve",
    signature: { mode: "strict", fields: ["merchant_id"], signingString: "M1…", expected: "ab", received: "ab", matched: true },
  });
  const exchange = (n: number, size: number): Exchange => ({
    method: "POST",
    url: "http://127.0.0.1/v1/capture",
    requestHeaders: [["Content-Type", "application/json"]],
    requestType: "application/json",
    body: `{"n":${n},"pad":"${"x".repeat(size)}"}`,
    status: 200,
    responseHeaders: [["content-type", "application/json"]],
    responseType: "application/json",
    responseBody: "{}",
    duration_ms: 1.5,
  });

  test("entries and exchanges read back as they were added; large exchanges are kept while they fit in the bytes allowed", () => {
    // an exchange of a 4,000-character body takes ~4.1 KB, but room for ~12.1 KB (3 bytes a character) is needed to write it
    const log = createRequestLog(50, 10, { entries: 64 * 1024, exchanges: 30_000 });
    for (let n = 1; n <= 30; n++) log.add(entry(n), exchange(n, n <= 20 ? 100 : 4000));
    expect(log.list({ limit: 100 }).map((e) => e.id)).toEqual(Array.from({ length: 30 }, (_, i) => `req-${i + 1}`));
    expect(log.list({ order_no: "O-7" })).toEqual([entry(7)]);
    // values JSON escapes are found as sent (the scan skips entries whose JSON lacks the value)
    const odd = { ...entry(31), order_no: 'O-"31"\\é\u2028' };
    log.add(odd);
    expect(log.list({ order_no: odd.order_no, merchant_id: "M1", operation: "capture" })).toEqual([odd]);
    expect(log.list({ order_no: "O-3" })).toEqual([entry(3)]);
    // 10 exchanges are counted; of the last ten only the newest five fit in 30,000 bytes
    for (let n = 26; n <= 30; n++) expect(log.exchange(`req-${n}`)).toEqual(exchange(n, 4000));
    expect(log.exchange("req-25")).toBeUndefined();
    expect(log.exchange("req-20")).toBeUndefined();
    expect(log.exchange("req-unknown")).toBeUndefined();
  });
});

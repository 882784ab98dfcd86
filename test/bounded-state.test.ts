// What must not grow without bound in a long run: the request log, finished notifications, nth-call
// counters, and the repository's due queues skip what was settled early. Each cap keeps the most recent.
// And the room V8 gets to grow the heap by before its next full collection (src/heap.ts).
import request from "supertest";
import { describe, expect, test } from "vitest";
import { createRequestLog, type RequestLogEntry } from "../src/store/request-log.js";
import { NthCounters } from "../src/scenarios/registry.js";
import { createRepository, NOTIFICATION_HISTORY_LIMIT } from "../src/domain/records.js";
import type { Notification, State } from "../src/domain/types.js";
import { ACME, directPayment, makeApp, postAuthorise } from "./helpers.js";

const entry = (n: number, merchant = "M1"): RequestLogEntry => ({
  id: `req-${n}`,
  at: new Date(n * 1000).toISOString(),
  operation: "authorise",
  path: "/v1/authorise",
  ip: "127.0.0.1",
  merchant_id: merchant,
  account_id: "A1",
  order_no: `O-${n}`,
  http_status: 200,
  result: "0000:Success",
  rule: "default/visa-approve",
  signature: null,
});

describe("request log", () => {
  test("keeps the most recent entries up to its capacity, oldest first in a listing", () => {
    const log = createRequestLog(10);
    for (let n = 1; n <= 25; n++) log.add(entry(n, n % 2 ? "odd" : "even"));
    expect(log.list({ limit: 100 }).map((e) => e.id)).toEqual(Array.from({ length: 10 }, (_, i) => `req-${16 + i}`));
    expect(log.list({ merchant_id: "odd", limit: 3 }).map((e) => e.id)).toEqual(["req-21", "req-23", "req-25"]);
    expect(log.list({ order_no: "O-3" })).toEqual([]);
  });

  test("GET /__sandbox/requests lists the newest requests, oldest first", async () => {
    const { app } = await makeApp();
    for (let i = 0; i < 3; i++) await postAuthorise(app, directPayment({ order_no: `LOG-${i}` })).expect(200);
    const res = await request(app).get("/__sandbox/requests").query({ merchant_id: ACME.merchant_id, limit: 2 }).expect(200);
    expect(res.body.requests.map((r: { order_no: string }) => r.order_no)).toEqual(["LOG-1", "LOG-2"]);
  });
});

describe("notifications", () => {
  const state = (): State => ({
    version: 1,
    seed: "s",
    counters: {},
    merchants: [],
    tokens: [],
    transactions: [],
    subscriptions: [],
    refunds: [],
    notifications: [],
    payouts: [],
  });
  const notification = (n: number, finished: boolean): Notification =>
    ({ notification_id: `ntf_${n}`, merchant_id: "M1", state: finished ? "delivered" : "pending", attempts: [] }) as unknown as Notification;

  test("finished ones beyond the limit are forgotten oldest first; pending ones are kept", () => {
    const s = state();
    const records = createRepository(s);
    records.addNotification(notification(0, false));
    const total = Math.ceil(NOTIFICATION_HISTORY_LIMIT * 1.25) + 10;
    for (let n = 1; n <= total; n++) records.addNotification(notification(n, true));
    expect(s.notifications.length).toBeLessThanOrEqual(NOTIFICATION_HISTORY_LIMIT * 1.25);
    expect(s.notifications.filter((n) => n.state !== "pending").length).toBeGreaterThanOrEqual(NOTIFICATION_HISTORY_LIMIT);
    expect(records.notification("ntf_0")).toBeDefined();
    expect(records.notification("ntf_1")).toBeUndefined();
    expect(records.notification(`ntf_${total}`)).toBeDefined();
    expect([...records.pendingNotifications()].map((n) => n.notification_id)).toEqual(["ntf_0"]);
  });
});

describe("nth-call counters", () => {
  test("stay within their limit, keep counting the orders in use, and forget the unused ones", () => {
    const counters = new NthCounters(1000);
    expect(counters.next("M1|capture|busy")).toBe(1);
    for (let i = 0; i < 5000; i++) {
      counters.next(`M1|capture|O-${i}`);
      // an order a test keeps calling is never forgotten, however many others come and go
      if (i % 200 === 0) counters.next("M1|capture|busy");
      expect(counters.size).toBeLessThanOrEqual(1000);
    }
    expect(counters.next("M1|capture|busy")).toBe(27);
    expect(counters.next("M1|capture|O-4999")).toBe(2);
    expect(counters.next("M1|capture|O-0")).toBe(1); // long unused: counted afresh
  });

  test("a reset forgets one merchant's counts or all", () => {
    const counters = new NthCounters(1000);
    counters.next("M1|authorise|A");
    counters.next("M2|authorise|A");
    counters.clear("M1|");
    expect(counters.next("M1|authorise|A")).toBe(1);
    expect(counters.next("M2|authorise|A")).toBe(2);
    counters.clear();
    expect(counters.next("M2|authorise|A")).toBe(1);
  });
});

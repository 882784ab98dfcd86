// Notifications (PRODUCT.md §9): every change with a notify_url is POSTed to a real receiver,
// signed, with a unique id; retried with backoff on the sandbox clock; every attempt recorded;
// operable through /__sandbox/notifications. Each test runs a real server and a real receiver.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { until } from "./waiting.js";
import { createApp } from "../src/server/app.js";
import { createDeps, startSandbox, type Sandbox, type SandboxOptions } from "../src/server/sandbox.js";
import type { Notification, State } from "../src/domain/types.js";
import { ACME, ANY_SIGNATURE, apmPayment, directPayment, parseXml, textOf } from "./helpers.js";

/** The field list a merchant verifies encryption_data with, read from the data file as a merchant's integration would. */
const SIGNED_FIELDS = (JSON.parse(readFileSync(new URL("../data/signature-fields.json", import.meta.url), "utf8")) as Record<string, { response: string[] }>)
  .notification!.response;
const FAST = [1, 2, 4, 8, 16];

type Answer = number | "hang";

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: Record<string, unknown>;
}

interface Receiver {
  url: string;
  received: Received[];
  /** the most requests it was answering at the same time */
  maxConcurrent(): number;
  close(): Promise<void>;
}

/** A merchant's notification endpoint: answers the i-th request with answers[i] (then 200), after delayMs. */
async function startReceiver(answers: Answer[] = [], delayMs = 0): Promise<Receiver> {
  const received: Received[] = [];
  let active = 0;
  let max = 0;
  const server = createServer((req, res) => {
    active++;
    max = Math.max(max, active);
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (raw += chunk));
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, raw, body: JSON.parse(raw) as Record<string, unknown> });
      const answer = answers[received.length - 1] ?? 200;
      if (answer === "hang") return;
      setTimeout(() => {
        active--;
        res.writeHead(answer, { "content-type": "text/plain" }).end(answer < 300 ? "ok" : "not now");
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/sandgate`,
    received,
    maxConcurrent: () => max,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let sandbox: Sandbox;
let receiver: Receiver;
const closers: (() => Promise<void>)[] = [];

const startUnmanaged = (options: SandboxOptions = {}) => startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "notify-seed", ...options });

/** A sandbox closed after the test. */
async function start(options: SandboxOptions = {}): Promise<Sandbox> {
  const s = await startUnmanaged(options);
  closers.push(() => s.close());
  return s;
}

async function useReceiver(answers: Answer[] = [], delayMs = 0): Promise<Receiver> {
  const r = await startReceiver(answers, delayMs);
  closers.push(() => r.close());
  return r;
}

beforeEach(async () => {
  sandbox = await start();
  receiver = await useReceiver();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  vi.unstubAllEnvs();
});

const api = () => request(sandbox.url);

async function pay(overrides: Record<string, unknown> = {}, body = directPayment({ amount: "100.00", notify_url: receiver.url, ...overrides })) {
  const res = await api().post("/v1/authorise").send(body);
  expect(res.status).toBe(200);
  const xml = parseXml(res.text);
  return { transaction_id: textOf(xml.transaction_id), order_no: String(body.order_no), currency: String(body.currency), amount: textOf(xml.amount) };
}

type Ref = Awaited<ReturnType<typeof pay>>;
const ENVELOPE = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, encryption_data: ANY_SIGNATURE };

async function batch(op: "capture" | "cancel" | "review" | "refund", order: Record<string, unknown>) {
  const res = await api()
    .post(`/v1/${op}`)
    .send({ ...ENVELOPE, [`${op}_orders`]: [order] });
  expect(res.body.return_status).toBe("1");
  return res.body[`${op}_orders`][0] as Record<string, string>;
}

const deliver = async () => (await api().post("/__sandbox/notifications/deliver").expect(200)).body as { attempts: number; pending: number };
const advance = (seconds: number) => api().post("/__sandbox/clock").send({ advance_seconds: seconds }).expect(200);
const list = async (query: Record<string, string> = {}) =>
  (await api().get("/__sandbox/notifications").query(query).expect(200)).body.notifications as Notification[];
const only = async (query: Record<string, string> = {}) => {
  const all = await list(query);
  expect(all).toHaveLength(1);
  return all[0]!;
};
const trigger = (body: Record<string, unknown>) =>
  api()
    .post("/__sandbox/notifications/trigger")
    .send({ merchant_id: ACME.merchant_id, url: receiver.url, ...body });

/** What a merchant computes to verify encryption_data: each listed field's value, `data.x` read inside data, a missing one empty. */
function expectedSignature(body: Record<string, unknown>, key: string = ACME.key): string {
  const valueOf = (f: string) => {
    const [head, inner] = f.split(".") as [string, string | undefined];
    const v = inner === undefined ? body[head] : (body[head] as Record<string, unknown> | undefined)?.[inner];
    return v === undefined || v === null ? "" : String(v);
  };
  return createHash("sha256")
    .update(SIGNED_FIELDS.map(valueOf).join("") + key)
    .digest("hex");
}

const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;

describe("a payment with notify_url is POSTed to it, signed", () => {
  test("JSON body with a unique id, the event and the query element; headers; encryption_data verifies with the merchant's key", async () => {
    const p = await pay();
    await deliver();

    expect(receiver.received).toHaveLength(1);
    const [hit] = receiver.received;
    expect(hit!.path).toBe("/hooks/sandgate");
    expect(hit!.headers["content-type"]).toMatch(/^application\/json/);
    expect(Object.keys(hit!.body)).toEqual(["notification_id", "event", "merchant_id", "created_at", "sent_at", "data", "encryption_data"]);
    expect(hit!.body).toMatchObject({ event: "payment.authorised", merchant_id: ACME.merchant_id });
    expect(hit!.body.notification_id).toMatch(/^ntf_[0-9a-f]{24}$/);
    expect(hit!.headers["x-sandbox-notification-id"]).toBe(hit!.body.notification_id);
    expect(hit!.headers["x-sandbox-event"]).toBe("payment.authorised");
    expect(hit!.headers["x-sandbox-attempt"]).toBe("1");
    expect(SIGNED_FIELDS.slice(0, 5)).toEqual(["notification_id", "event", "merchant_id", "created_at", "sent_at"]);
    expect(SIGNED_FIELDS).toEqual(expect.arrayContaining(["data.transaction_id", "data.order_no", "data.amount", "data.currency", "data.payment_status"]));
    expect(hit!.body.encryption_data).toBe(expectedSignature(hit!.body));
    expect(hit!.body.encryption_data).not.toBe(expectedSignature(hit!.body, "another_key_123"));
    // what a merchant acts on is signed: a notification whose amount or state was changed in transit does not verify
    const data = hit!.body.data as Record<string, unknown>;
    for (const change of [{ amount: "9999.00" }, { payment_status: "3000" }, { transaction_id: "1" }, { currency: "EUR" }, { order_no: "other" }])
      expect(expectedSignature({ ...hit!.body, data: { ...data, ...change } })).not.toBe(hit!.body.encryption_data);
    // and so is the attempt's time: a replayed notification cannot be made to look fresh
    expect(expectedSignature({ ...hit!.body, sent_at: new Date().toISOString() })).not.toBe(hit!.body.encryption_data);
    expect(hit!.raw).not.toContain("4242424242424242");

    // data is what the transaction query shows for the payment, plus account_id
    const query = await api()
      .post("/v1/retrievalTrans")
      .type("form")
      .send({ ...ENVELOPE, transaction_id: p.transaction_id });
    expect(hit!.body.data).toEqual({ account_id: ACME.account_id, ...query.body.orders_list[0] });
    expect(hit!.body.data).toMatchObject({ transaction_id: p.transaction_id, payment_status: "2000" });

    const n = await only();
    expect(n).toMatchObject({ notification_id: hit!.body.notification_id, state: "delivered", url: receiver.url, event: "payment.authorised", due_at: "" });
    expect(n.attempts).toEqual([expect.objectContaining({ attempt: 1, reason: "first", http_status: 200, error: "", response_body: "ok" })]);
    // the attempt's body is the notification's with the attempt's time, signed again
    const { encryption_data: _stored, ...stored } = n.payload;
    expect(hit!.body).toEqual({ ...stored, sent_at: n.attempts[0]!.at, encryption_data: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  const payments: { name: string; body: () => Record<string, unknown>; path?: string; event: string; status: string }[] = [
    { name: "approved, manual capture", body: () => directPayment({ notify_url: receiver.url }), event: "payment.authorised", status: "2000" },
    { name: "approved, auto capture", body: () => directPayment({ account_id: "A10002", notify_url: receiver.url }), event: "payment.paid", status: "3000" },
    { name: "declined", body: () => directPayment({ card: "4000000000000002", notify_url: receiver.url }), event: "payment.declined", status: "6000" },
    {
      name: "3-D Secure challenge",
      body: () => directPayment({ card: "4000002760003184", notify_url: receiver.url }),
      event: "payment.pending",
      status: "1000",
    },
    { name: "held for review", body: () => directPayment({ card: "4000000000009235", notify_url: receiver.url }), event: "payment.review", status: "2100" },
    { name: "APM", body: () => apmPayment({ notify_url: receiver.url }), event: "payment.pending", status: "1000" },
    {
      name: "redirect checkout",
      path: "/v1/checkout",
      body: () => {
        const { card: _c, expiration_month: _m, expiration_year: _y, security_code: _s, ...rest } = directPayment({ notify_url: receiver.url });
        return rest;
      },
      event: "payment.pending",
      status: "1000",
    },
  ];
  test.each(payments)("$name → $event", async ({ body, path, event, status }) => {
    const sent = body();
    await api()
      .post(path ?? "/v1/authorise")
      .send(sent)
      .expect(200);
    await deliver();
    expect(receiver.received.map((r) => r.body.event)).toEqual([event]);
    expect(receiver.received[0]!.body.data).toMatchObject({ order_no: sent.order_no, payment_status: status });
  });

  test("a payment without notify_url queues nothing", async () => {
    await pay({ notify_url: undefined });
    expect(await list()).toEqual([]);
    await deliver();
    expect(receiver.received).toEqual([]);
  });
});

describe("every later change is notified too", () => {
  test("capture, refunds accepted / processed / failed (by time and by operator), cancel, review: events, data and unique ids", async () => {
    const paid = await pay();
    await batch("capture", paid);
    const ok = await batch("refund", { ...paid, refund_amount: "30.00" });
    const fails = await batch("refund", { ...paid, refund_amount: "10.13" });
    const slow = await batch("refund", { ...paid, refund_amount: "10.17" });
    await advance(5); // the first two settle: processed, failed
    await api().post(`/__sandbox/refunds/${slow.refund_reference_id}/settle`).send({ result: "processed" }).expect(200);
    const cancelled = await pay();
    await batch("cancel", cancelled);
    const approved = await pay({ card: "4000000000009235" });
    await batch("review", { ...approved, review_flag: "approve" });
    const rejected = await pay({ card: "4000000000009235" });
    await batch("review", { ...rejected, review_flag: "reject" });
    await deliver();

    // the outbox lists them in the order the changes happened
    const outbox = await list();
    const events = (ref: Ref) => outbox.filter((n) => n.payload.data.transaction_id === ref.transaction_id);
    const byEvent = (ref: Ref) => events(ref).map((n) => n.event);
    expect(byEvent(paid)).toEqual([
      "payment.authorised",
      "payment.captured",
      "refund.accepted",
      "refund.accepted",
      "refund.accepted",
      "refund.processed",
      "refund.failed",
      "refund.processed",
    ]);
    expect(byEvent(cancelled)).toEqual(["payment.authorised", "payment.cancelled"]);
    expect(byEvent(approved)).toEqual(["payment.review", "payment.review_approved"]);
    expect(byEvent(rejected)).toEqual(["payment.review", "payment.review_rejected"]);

    const refundData = (id: string, event: string) =>
      receiver.received.find((r) => r.body.event === event && (r.body.data as Record<string, string>).refund_reference_id === id)?.body.data as Record<
        string,
        string
      >;
    expect(refundData(ok.refund_reference_id!, "refund.accepted")).toMatchObject({ refund_status: "1", refund_amount: "30.00", refund_processing_date: "" });
    expect(refundData(ok.refund_reference_id!, "refund.processed")).toMatchObject({ refund_status: "2", refund_reference: expect.stringMatching(/^ARN\d+$/) });
    expect(refundData(fails.refund_reference_id!, "refund.failed")).toMatchObject({ refund_status: "3", refund_amount: "10.13" });
    expect(refundData(slow.refund_reference_id!, "refund.processed")).toMatchObject({ refund_status: "2" });
    // the refund data is the refund search element, plus account_id
    const search = await api()
      .post("/v1/retrievalRefund")
      .type("form")
      .send({ ...ENVELOPE, refund_reference_id: ok.refund_reference_id });
    expect(refundData(ok.refund_reference_id!, "refund.processed")).toEqual({ account_id: ACME.account_id, ...search.body.refund_orders[0] });
    expect(events(cancelled)[1]!.payload.data.payment_status).toBe("5000");

    const ids = receiver.received.map((r) => r.body.notification_id);
    expect(ids).toHaveLength(14);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(outbox.map((n) => n.notification_id)));
    for (const r of receiver.received) expect(r.body.encryption_data).toBe(expectedSignature(r.body));
  });

  test("a refund's and a payout's reference, amount and state are signed: changed in transit, the notification does not verify", async () => {
    const refund = { transaction_id: "1234567890123456", refund_reference_id: "1234567890123456-01", refund_amount: "5.00", refund_status: "2" };
    const payout = {
      request_id: "5e1f0c3a-0000-4000-8000-000000000001",
      payment_amount: "920.00",
      payment_currency: "EUR",
      status: "COMPLETED",
      failure_type: "",
    };
    await trigger({ event: "refund.processed", data: refund }).expect(201);
    await trigger({ event: "payout.completed", data: payout }).expect(201);
    const [r, p] = receiver.received;
    for (const hit of [r!, p!]) expect(hit.body.encryption_data).toBe(expectedSignature(hit.body));
    const tampered = (hit: typeof r, change: Record<string, string>) => expectedSignature({ ...hit!.body, data: { ...(hit!.body.data as object), ...change } });
    for (const change of [{ refund_amount: "50.00" }, { refund_status: "3" }, { refund_reference_id: "1234567890123456-02" }] as Record<string, string>[])
      expect(tampered(r, change)).not.toBe(r!.body.encryption_data);
    for (const change of [{ payment_amount: "9200.00" }, { status: "FAILED" }, { failure_type: "NO_ACCOUNT" }, { request_id: "other" }] as Record<
      string,
      string
    >[])
      expect(tampered(p, change)).not.toBe(p!.body.encryption_data);
  });

  test("a refused batch order notifies nothing", async () => {
    const p = await pay();
    await deliver();
    const res = await api()
      .post("/v1/capture")
      .send({ ...ENVELOPE, capture_orders: [{ ...p, amount: "500.00" }] });
    expect(res.body.capture_orders[0].capture_status).toBe("0");
    await deliver();
    expect(receiver.received.map((r) => r.body.event)).toEqual(["payment.authorised"]);
  });
});

describe("retries with backoff on the sandbox clock", () => {
  test("500, 500, then 200: three attempts of the same notification, 1 s then 2 s apart", async () => {
    const realStart = Date.now();
    receiver = await useReceiver([500, 500, 200]);
    await pay();
    await deliver();
    let n = await only();
    expect(n.state).toBe("pending");
    expect(n.attempts).toEqual([expect.objectContaining({ attempt: 1, reason: "first", http_status: 500, error: expect.stringContaining("HTTP 500") })]);
    expect(seconds(n.attempts[0]!.at, n.due_at)).toBeCloseTo(1, 0);

    expect((await deliver()).attempts).toBe(0); // not due yet
    await advance(1);
    await deliver();
    n = await only();
    expect(n.attempts.map((a) => a.http_status)).toEqual([500, 500]);
    expect(seconds(n.attempts[1]!.at, n.due_at)).toBeCloseTo(2, 0);

    await advance(1);
    await deliver();
    expect((await only()).attempts).toHaveLength(2); // 1 s of 2: still waiting
    await advance(1);
    await deliver();
    n = await only();
    expect(n.state).toBe("delivered");
    expect(n.attempts.map((a) => [a.attempt, a.reason, a.http_status])).toEqual([
      [1, "first", 500],
      [2, "retry", 500],
      [3, "retry", 200],
    ]);
    expect(receiver.received.map((r) => r.headers["x-sandbox-attempt"])).toEqual(["1", "2", "3"]);
    // the same notification every time, created_at included; each attempt with its own signed sent_at
    const bodies = receiver.received.map((r) => r.body);
    const without = (b: Record<string, unknown>) => ({ ...b, sent_at: undefined, encryption_data: undefined });
    expect(new Set(bodies.map((b) => JSON.stringify(without(b)))).size).toBe(1);
    // each attempt's sent_at is the real time it was sent: the log dates attempts by the sandbox's
    // clock (moved 3 s here), while a receiver's freshness window holds on the world's
    const sent = bodies.map((b) => Date.parse(String(b.sent_at)));
    expect(sent).toEqual([...sent].sort((a, b) => a - b));
    for (const t of sent) expect(t).toBeGreaterThanOrEqual(realStart);
    for (const t of sent) expect(t).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(n.attempts[2]!.at) - sent[2]!).toBeGreaterThanOrEqual(3_000);
    for (const b of bodies) expect(b.encryption_data).toBe(expectedSignature(b));
  });

  test("the fast schedule (1, 2, 4, 8, 16 s) runs out after 6 attempts: failed, and nothing more is sent", async () => {
    receiver = await useReceiver(Array<Answer>(10).fill(503));
    await pay();
    await deliver();
    for (const [i, wait] of FAST.entries()) {
      if (wait > 1) {
        await advance(wait - 1);
        await deliver();
        expect((await only()).attempts).toHaveLength(i + 1);
      }
      await advance(1);
      await deliver();
      expect((await only()).attempts).toHaveLength(i + 2);
    }
    const n = await only();
    expect(n).toMatchObject({ state: "failed", due_at: "", error: expect.stringMatching(/gave up after 6 failed attempts.*HTTP 503/) });
    await advance(86_400);
    await deliver();
    expect(receiver.received).toHaveLength(6);
    expect(await list({ state: "failed" })).toHaveLength(1);
  });

  test("the realistic schedule waits a minute before the first retry", async () => {
    sandbox = await start({ notifySchedule: "realistic" });
    receiver = await useReceiver([500]);
    await pay();
    await deliver();
    await advance(59);
    await deliver();
    expect(receiver.received).toHaveLength(1);
    await advance(1);
    await deliver();
    expect((await only()).state).toBe("delivered");
  });

  test.each([
    [200, "delivered"],
    [201, "delivered"],
    [204, "delivered"],
    [302, "pending"],
    [404, "pending"],
    [500, "pending"],
  ] as const)("an answer %i leaves it %s", async (status, state) => {
    receiver = await useReceiver([status]);
    const res = await trigger({ event: "test.status" }).expect(201);
    expect(res.body.notification).toMatchObject({ state, attempts: [expect.objectContaining({ http_status: status })] });
  });

  test("a receiver that is down: the connection error is recorded and retried", async () => {
    const down = await startReceiver();
    await down.close();
    const res = await trigger({ url: down.url }).expect(201);
    expect(res.body.notification).toMatchObject({
      state: "pending",
      attempts: [expect.objectContaining({ http_status: null, error: expect.stringMatching(/^could not deliver: .*ECONNREFUSED/) })],
    });
  });

  test("a receiver that never answers holds up nothing else: health and payments are answered while its attempt waits", async () => {
    vi.stubEnv("SANDGATE_TIMINGS", JSON.stringify({ notifyTimeoutMs: 60_000 })); // the attempt certainly waits while the test asks
    sandbox = await start();
    receiver = await useReceiver(["hang"]);
    await pay();
    let settled = false;
    const draining = deliver().finally(() => (settled = true));
    await until(() => receiver.received.length === 1); // the attempt is at the receiver, unanswered
    await api().get("/__sandbox/health").expect(200);
    await pay({ notify_url: undefined });
    expect(settled).toBe(false);
    await receiver.close(); // the receiver goes: the attempt ends, recorded as failed
    await draining;
    expect((await only()).state).toBe("pending");
  });

  test("a receiver that never answers: the attempt times out after the notification timeout (5 s, shrunk here), recorded so, and is retried", async () => {
    vi.stubEnv("SANDGATE_TIMINGS", JSON.stringify({ notifyTimeoutMs: 300 }));
    sandbox = await start();
    receiver = await useReceiver(["hang", 200]);
    await pay();
    await deliver();
    let n = await only();
    expect(n.state).toBe("pending");
    expect(n.attempts).toEqual([expect.objectContaining({ http_status: null, error: "no answer within 0.3 s (timed out)" })]);
    expect(n.attempts[0]!.duration_ms).toBeGreaterThanOrEqual(290);
    await advance(1);
    await deliver();
    n = await only();
    expect(n.state).toBe("delivered");
    expect(receiver.received.map((r) => r.headers["x-sandbox-attempt"])).toEqual(["1", "2"]);
  });

  test("never more than 8 deliveries at once; all of them arrive", async () => {
    receiver = await useReceiver([], 150);
    for (let i = 0; i < 20; i++)
      sandbox.deps.notifier.emit({ merchantId: ACME.merchant_id, url: receiver.url, event: "test.burst", data: { i } }, sandbox.deps.store);
    await deliver();
    expect(receiver.received).toHaveLength(20);
    expect(receiver.maxConcurrent()).toBeLessThanOrEqual(8);
    expect(receiver.maxConcurrent()).toBeGreaterThan(1);
    expect(await list({ state: "delivered" })).toHaveLength(20);
  });
});

describe("scenario behaviour: delay, duplicate, drop", () => {
  test("data is masked as everything Sandgate keeps: cards and codes in any shape, card numbers in free text; a bank account number that passes Luhn stays", async () => {
    const data = {
      card: ["4111111111111111"],
      payment: { security_code: 123 },
      note: "card 4111 1111 1111 1111",
      bank_details: { account_number: "4111111111111111", iban: "GB33BUKB20201555555555" },
    };
    await trigger({ event: "test.masking", data }).expect(201);
    const body = receiver.received.at(-1)!.body as { data: Record<string, unknown> };
    expect(body.data).toEqual({
      card: ["411111******1111"],
      payment: { security_code: "***" },
      note: "card 411111******1111",
      bank_details: data.bank_details,
    });
  });

  test("duplicate: the same notification (same id, same body) is delivered twice, both recorded", async () => {
    const res = await trigger({ event: "test.twice", notify: { duplicate: 1 } }).expect(201);
    expect(res.body.notification.state).toBe("delivered");
    expect(receiver.received).toHaveLength(2);
    // the same notification, each copy with its own sent_at, signed
    const [one, two] = receiver.received.map((r) => r.body);
    expect({ ...one, sent_at: undefined, encryption_data: undefined }).toEqual({ ...two, sent_at: undefined, encryption_data: undefined });
    for (const b of [one!, two!]) expect(b.encryption_data).toBe(expectedSignature(b));
    expect(receiver.received.map((r) => r.headers["x-sandbox-notification-id"])).toEqual([
      res.body.notification.notification_id,
      res.body.notification.notification_id,
    ]);
    const n = await only();
    expect(n.attempts.map((a) => [a.reason, a.http_status])).toEqual([
      ["first", 200],
      ["duplicate", 200],
    ]);
  });

  test("drop: recorded as dropped and never sent (until an operator resends it)", async () => {
    const res = await trigger({ event: "test.lost", notify: { drop: true } }).expect(201);
    expect(res.body.notification).toMatchObject({ state: "dropped", attempts: [], due_at: "", error: expect.stringContaining("dropped") });
    await advance(3_600);
    await deliver();
    expect(receiver.received).toEqual([]);
    const resent = await api().post(`/__sandbox/notifications/${res.body.notification.notification_id}/resend`).expect(200);
    expect(resent.body.notification).toMatchObject({ state: "delivered", attempts: [expect.objectContaining({ reason: "resend", http_status: 200 })] });
  });

  test("delay: not sent before its time on the sandbox clock", async () => {
    const res = await trigger({ event: "test.late", notify: { delay_seconds: 30 } }).expect(201);
    const n = res.body.notification as Notification;
    expect(n).toMatchObject({ state: "pending", attempts: [] });
    expect(seconds(n.created_at, n.due_at)).toBe(30);
    await deliver();
    await advance(29);
    await deliver();
    expect(receiver.received).toEqual([]);
    await advance(1);
    await deliver();
    expect(receiver.received).toHaveLength(1);
    expect((await only()).state).toBe("delivered");
  });

  test("the same behaviour through emit, as scenario rules will drive it", async () => {
    const emit = (event: string, notify: Record<string, unknown>) =>
      sandbox.deps.notifier.emit({ merchantId: ACME.merchant_id, url: receiver.url, event, data: {}, notify }, sandbox.deps.store);
    emit("test.dropped", { drop: true });
    emit("test.thrice", { duplicate: 2 });
    emit("test.later", { delay_seconds: 10 });
    await deliver();
    expect(receiver.received.map((r) => r.body.event)).toEqual(["test.thrice", "test.thrice", "test.thrice"]);
    expect((await only({ event: "test.dropped" })).state).toBe("dropped");
    expect((await only({ event: "test.later" })).state).toBe("pending");
  });
});

describe("loop guard: never into Sandgate itself", () => {
  const own = (s: Sandbox) => [
    `${s.url}/v1/authorise`,
    `http://localhost:${s.port}/V1/capture`,
    `http://[::1]:${s.port}/v1/refund`,
    `${s.url}/__sandbox/notifications/trigger`,
    `${s.url}//v1/%72efund`,
  ];
  test("own gateway, operator and page paths are refused at once, recorded as failed, and nothing reaches them", async () => {
    for (const url of own(sandbox)) {
      const res = await trigger({ url, event: "test.loop" }).expect(201);
      expect(res.body.notification).toMatchObject({
        state: "failed",
        due_at: "",
        attempts: [
          expect.objectContaining({ http_status: null, duration_ms: 0, error: expect.stringMatching(/own .* path; a notification there would loop/) }),
        ],
      });
    }
    await advance(3_600);
    await deliver();
    expect(await list({ state: "failed" })).toHaveLength(own(sandbox).length);
    expect(await list()).toHaveLength(own(sandbox).length); // the trigger endpoint was never called by a notification
    expect((await api().get("/__sandbox/requests")).body.requests).toEqual([]);
  });

  test("a payment whose notify_url is this server's /v1/authorise: one payment, one failed notification", async () => {
    await pay({ notify_url: `${sandbox.url}/v1/authorise` });
    await deliver();
    expect((await only()).state).toBe("failed");
    expect((await api().get("/__sandbox/requests")).body.requests).toHaveLength(1);
  });

  test("another server on this machine, or a /v1/ path elsewhere, is not refused", async () => {
    const res = await trigger({ url: receiver.url.replace("/hooks/sandgate", "/v1/webhooks") }).expect(201);
    expect(res.body.notification.state).toBe("delivered");
  });
});

describe("operator API", () => {
  test("trigger: a signed test notification sent at once; card numbers masked; bad input refused", async () => {
    const res = await trigger({
      event: "test.ping",
      data: { hello: "wörld <b>", card: "4242424242424242", nested: { card_number: "5555555555554444", security_code: "123" } },
    }).expect(201);
    expect(res.body.notification).toMatchObject({ state: "delivered", event: "test.ping", merchant_id: ACME.merchant_id });
    const [hit] = receiver.received;
    expect(hit!.body.data).toEqual({ hello: "wörld <b>", card: "424242******4242", nested: { card_number: "555555******4444", security_code: "***" } });
    expect(hit!.body.encryption_data).toBe(expectedSignature(hit!.body));
    expect((await trigger({}).expect(201)).body.notification.event).toBe("test.notification");
    // a merchant provisioned on first use signs with its documented key
    const fresh = await trigger({ merchant_id: "CI-42" }).expect(201);
    expect(fresh.body.notification.payload.encryption_data).toBe(expectedSignature(fresh.body.notification.payload, "sk_test_CI-42"));
  });

  test.each([
    [{ merchant_id: "" }, "merchant_id"],
    [{ url: "ftp://shop.example.com/notify" }, "url"],
    [{ url: "not a url" }, "url"],
    [{ event: "bad event\r\nX-Evil: 1" }, "event"],
    [{ data: "text" }, "data"],
    [{ notify: { duplicate: 99 } }, "notify.duplicate"],
    [{ notify: { delay_seconds: -1 } }, "notify.delay_seconds"],
    [{ notify: { reorder: true } }, "notify"],
  ])("trigger %j is refused with 400 naming %s", async (body, field) => {
    const res = await trigger(body).expect(400);
    expect(res.body).toMatchObject({ error: "invalid_trigger", message: expect.stringContaining(field) });
    expect(await list()).toEqual([]);
  });

  test("resend: delivered again now with the same id, a new attempt recorded; a failed one that now succeeds is delivered", async () => {
    receiver = await useReceiver([200, 200, 410]);
    const first = (await trigger({ event: "test.again" }).expect(201)).body.notification as Notification;
    const again = await api().post(`/__sandbox/notifications/${first.notification_id}/resend`).expect(200);
    expect(again.body.notification).toMatchObject({ state: "delivered" });
    expect(again.body.notification.attempts.map((a: { reason: string }) => a.reason)).toEqual(["first", "resend"]);
    expect(receiver.received.map((r) => [r.headers["x-sandbox-notification-id"], r.headers["x-sandbox-attempt"]])).toEqual([
      [first.notification_id, "1"],
      [first.notification_id, "2"],
    ]);
    // a resend that fails is recorded but changes nothing else
    const failedResend = await api().post(`/__sandbox/notifications/${first.notification_id}/resend`).expect(200);
    expect(failedResend.body.notification).toMatchObject({ state: "delivered", attempts: [{}, {}, expect.objectContaining({ http_status: 410 })] });

    const flaky = await useReceiver(Array<Answer>(FAST.length + 1).fill(500));
    const lost = (await trigger({ url: flaky.url }).expect(201)).body.notification as Notification;
    for (const wait of FAST) {
      await advance(wait);
      await deliver();
    }
    expect((await api().get(`/__sandbox/notifications/${lost.notification_id}`).expect(200)).body.notification.state).toBe("failed");
    const revived = await api().post(`/__sandbox/notifications/${lost.notification_id}/resend`).expect(200);
    expect(revived.body.notification).toMatchObject({ state: "delivered", error: "" });
    expect(revived.body.notification.attempts).toHaveLength(FAST.length + 2);
    await api().post("/__sandbox/notifications/ntf_nope/resend").expect(404);
  });

  test("list filters by merchant, event and state; one by id; unknown id and bad state refused", async () => {
    await pay();
    await pay({ card: "4000000000000002" });
    await trigger({ merchant_id: "M10002", event: "test.other", notify: { drop: true } }).expect(201);
    await deliver();
    expect(await list()).toHaveLength(3);
    expect((await list({ merchant_id: ACME.merchant_id })).map((n) => n.event)).toEqual(["payment.authorised", "payment.declined"]);
    expect((await list({ event: "payment.declined" })).map((n) => n.merchant_id)).toEqual([ACME.merchant_id]);
    expect((await list({ state: "dropped" })).map((n) => n.merchant_id)).toEqual(["M10002"]);
    expect(await list({ merchant_id: ACME.merchant_id, state: "pending" })).toEqual([]);
    const one = (await list({ event: "payment.declined" }))[0]!;
    expect((await api().get(`/__sandbox/notifications/${one.notification_id}`).expect(200)).body.notification).toEqual(one);
    expect((await api().get("/__sandbox/notifications/ntf_nope").expect(404)).body.error).toBe("notification_not_found");
    expect((await api().get("/__sandbox/notifications?state=lost").expect(400)).body.error).toBe("invalid_state");
  });

  test("deliver answers with the attempts made and the counts by state", async () => {
    // an app without the server's timer, so only this call sends
    const deps = await createDeps({ logLevel: "silent", seed: "notify-seed" });
    const app = createApp(deps);
    receiver = await useReceiver([200, 500]);
    for (let i = 0; i < 2; i++)
      await request(app)
        .post("/v1/authorise")
        .send(directPayment({ notify_url: receiver.url }))
        .expect(200);
    await request(app)
      .post("/__sandbox/notifications/trigger")
      .send({ merchant_id: ACME.merchant_id, url: receiver.url, notify: { drop: true } })
      .expect(201);
    expect(receiver.received).toEqual([]);
    const res = await request(app).post("/__sandbox/notifications/deliver").expect(200);
    expect(res.body).toEqual({ attempts: 2, pending: 1, delivered: 1, failed: 0, dropped: 1 });
    expect((await request(app).post("/__sandbox/notifications/deliver").expect(200)).body.attempts).toBe(0);
  });

  test("resetting a merchant removes its notifications; others stay", async () => {
    await pay();
    await trigger({ merchant_id: "M10002" }).expect(201);
    await api().post("/__sandbox/reset").send({ merchant_id: ACME.merchant_id }).expect(200);
    expect((await list()).map((n) => n.merchant_id)).toEqual(["M10002"]);
  });
});

describe("state", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sandgate-notify-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test("an older --data file without notifications loads; pending notifications survive a restart and are then sent", async () => {
    const file = join(dir, "state.json");
    const first = await startUnmanaged({ data: file });
    await first.close();
    const old = JSON.parse(readFileSync(file, "utf8")) as Partial<State>;
    delete old.notifications;
    writeFileSync(file, JSON.stringify(old));

    const second = await startUnmanaged({ data: file });
    expect(second.deps.store.data.notifications).toEqual([]);
    receiver = await useReceiver([503]); // whoever tries first (the timer or the drain) leaves it pending
    const body = directPayment({ notify_url: receiver.url });
    await request(second.url).post("/v1/authorise").send(body).expect(200);
    await second.close();
    await second.deps.notifier.drain();
    const onDisk = JSON.parse(readFileSync(file, "utf8")) as State;
    expect(onDisk.notifications.map((n) => [n.event, n.state, n.attempts.length])).toEqual([["payment.authorised", "pending", 1]]);

    const third = await startUnmanaged({ data: file });
    await request(third.url).post("/__sandbox/clock").send({ advance: "1m" }).expect(200);
    await request(third.url).post("/__sandbox/notifications/deliver").expect(200);
    expect(receiver.received.map((r) => (r.body.data as Record<string, string>).order_no)).toEqual([body.order_no, body.order_no]);
    await third.close();
    const delivered = (JSON.parse(readFileSync(file, "utf8")) as State).notifications[0]!;
    expect(delivered.state).toBe("delivered");
    expect(delivered.attempts.map((a) => a.http_status)).toEqual([503, 200]);
  });
});

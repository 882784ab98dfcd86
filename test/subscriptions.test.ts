// Subscriptions: deductions when the sandbox clock passes their time (schedule, promotion price,
// contract dates, suspension after a failed charge), and POST /v1/subscription/cancel.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { App } from "../src/server/app.js";
import request from "supertest";
import { describe, expect, test, vi, type MockInstance } from "vitest";
import { createClock } from "../src/domain/clock.js";
import type { Notifier } from "../src/notify/notifier.js";
import { defaultFixturesDir } from "../src/base/paths.js";
import type { SandboxOptions } from "../src/server/sandbox.js";
import { ACME, ANY_SIGNATURE, directPayment, makeApp, nextOrderNo, parseXml, postAuthorise, signRequest, signResponseFields, textOf } from "./helpers.js";

/** 2026-01-15 10:00:00 UTC: every test's sandbox starts here (before the fixture subscription's dates). */
const T0 = "2026-01-15T10:00:00.000Z";
/** A provisioned merchant of its own, so the fixture subscription (M10001) never mixes in. */
const SHOP = { merchant_id: "SUBS-SHOP", account_id: "SUBS-ACC" };

async function sandbox(start = T0, options: SandboxOptions = {}) {
  return makeApp({ clock: createClock(() => Date.parse(start)), ...options });
}

interface Started {
  recurring_id: string;
  order_no: string;
  transaction_id: string;
  token_id: string;
}

async function subscribe(app: App, subscription: Record<string, unknown>, overrides: Record<string, unknown> = {}): Promise<Started> {
  const body = directPayment({ ...SHOP, notify_url: "https://shop.example.com/notify", subscription, ...overrides });
  const res = await postAuthorise(app, body);
  const xml = parseXml(res.text);
  if (textOf(xml.order_status) !== "1") throw new Error(`first payment failed: ${res.text}`);
  return {
    recurring_id: textOf(xml.recurring_id),
    order_no: String(body.order_no),
    transaction_id: textOf(xml.transaction_id),
    token_id: textOf(xml.token_id),
  };
}

const advance = async (app: App, by: string) => {
  const res = await request(app).post("/__sandbox/clock").send({ advance: by });
  expect(res.status, res.text).toBe(200);
  return res.body as { now: string; applied: number };
};

interface OperatorSubscription {
  recurring_id: string;
  state: string;
  recurring_status: string;
  deductions: number;
  next_deduction_at: string;
  transactions: { transaction_id: string; order_no: string; amount: string; payment_status: string; result: string; created_at: string }[];
}

async function operatorView(app: App, recurringId: string): Promise<OperatorSubscription> {
  expect(recurringId).not.toBe("");
  const res = await request(app).get("/__sandbox/subscriptions").query({ recurring_id: recurringId });
  expect(res.status).toBe(200);
  expect(res.body.subscriptions).toHaveLength(1);
  return res.body.subscriptions[0];
}

/** The deductions (not the first payment) of a subscription: [created_at, amount] in order. */
async function deductions(app: App, s: Started): Promise<[string, string][]> {
  const view = await operatorView(app, s.recurring_id);
  return view.transactions.filter((t) => t.transaction_id !== s.transaction_id).map((t) => [t.created_at, t.amount]);
}

const query = (app: App, fields: Record<string, unknown>) =>
  request(app)
    .post("/v1/retrievalTrans")
    .type("form")
    .send({ ...SHOP, encryption_data: ANY_SIGNATURE, ...fields });

const cancel = (app: App, fields: Record<string, unknown>, merchant: Record<string, string> = SHOP) =>
  request(app)
    .post("/v1/subscription/cancel")
    .send({ ...merchant, encryption_data: ANY_SIGNATURE, ...fields });

/** The subscription notifications emitted for SHOP (the fixture subscription of M10001 may deduct too). */
const subscriptionEvents = (emit: MockInstance<Notifier["emit"]>) =>
  emit.mock.calls.map(([e]) => e).filter((e) => e.merchantId === SHOP.merchant_id && e.event.startsWith("subscription."));

/** The 15th of every month from February to December 2026, at 10:00 UTC. */
const MONTHLY_2026 = Array.from({ length: 11 }, (_, i) => `2026-${String(i + 2).padStart(2, "0")}-15T10:00:00.000Z`);

describe("a 12-month subscription advanced by the clock", () => {
  test("exactly 11 more deductions, on their dates, promotion price first, then finished", async () => {
    const { app, deps } = await sandbox();
    const emit = vi.spyOn(deps.notifier, "emit");
    const s = await subscribe(
      app,
      { contract_name: "Coffee club", interval: "month", interval_count: "1", billing_cycle: 12, promotion_cycle: 3, contract_amount: "19.99" },
      { amount: "4.99" },
    );
    expect(s.token_id).toBe(""); // paid by card number without token_flag: the card is kept on file, not handed out

    await advance(app, "365d");
    // deduction 1 is the first payment; 2 and 3 are still at the promotion price, 4 to 12 at contract_amount
    const amounts = ["4.99", "4.99", ...Array<string>(9).fill("19.99")];
    expect(await deductions(app, s)).toEqual(MONTHLY_2026.map((at, i) => [at, amounts[i]]));

    const view = await operatorView(app, s.recurring_id);
    expect(view).toMatchObject({ state: "finished", recurring_status: "2", deductions: 12 });

    // every deduction is a transaction in the query, with the subscription's subscription_result
    const orderNos = MONTHLY_2026.map((_, i) => `${s.order_no}-R${String(i + 2).padStart(2, "0")}`);
    const res = await query(app, { order_no: orderNos.join(",") });
    expect(res.status).toBe(200);
    const listed = res.body.orders_list as Record<string, unknown>[];
    expect(listed.map((o) => o.order_no)).toEqual(orderNos);
    listed.forEach((o, i) => {
      expect(o).toMatchObject({
        query_result: "1",
        amount: amounts[i],
        currency: "USD",
        payment_status: "2000", // a provisioned account captures manually: authorised
        transaction_date: MONTHLY_2026[i]!.replace(/[-T:]/g, "").slice(0, 14),
        subscription_result: {
          contract_name: "Coffee club",
          recurring_deduction_period: "1 month",
          recurring_deduction_time: "",
          recurring_id: s.recurring_id,
          recurring_status: "2",
        },
      });
    });

    // notified: each deduction, then the end, at the first payment's notify_url
    const events = subscriptionEvents(emit);
    expect(events.map((e) => e.event)).toEqual([...Array<string>(11).fill("subscription.deducted"), "subscription.finished"]);
    expect(new Set(events.map((e) => e.url))).toEqual(new Set(["https://shop.example.com/notify"]));
    expect(events[0]!.data).toMatchObject({ order_no: orderNos[0], amount: "4.99", subscription_result: { recurring_id: s.recurring_id } });

    // nothing is left: another year charges nothing
    await advance(app, "365d");
    expect(await deductions(app, s)).toHaveLength(11);
    expect(subscriptionEvents(emit)).toHaveLength(12);
  });

  test("advancing day by day gives exactly what one big jump gives (ids and dates included)", async () => {
    const run = async (steps: string[]) => {
      const { app, deps } = await sandbox();
      await subscribe(app, { interval: "month", billing_cycle: 12 }, { order_no: "SAME-MONTHLY" });
      await subscribe(app, { interval: "week", interval_count: "3" }, { order_no: "SAME-WEEKLY", amount: "7.00" });
      for (const step of steps) await advance(app, step);
      return {
        subscriptions: deps.store.data.subscriptions.filter((x) => x.merchant_id === SHOP.merchant_id),
        transactions: deps.store.data.transactions.filter((t) => t.merchant_id === SHOP.merchant_id),
      };
    };
    const jump = await run(["365d"]);
    const steps = await run(Array<string>(365).fill("1d"));
    expect(jump.transactions.length).toBe(2 + 11 + 17); // two first payments, 11 monthly, 17 every three weeks
    expect(steps).toEqual(jump);
  });

  test("a second catch-up finds nothing due", async () => {
    const { app, deps } = await sandbox();
    await subscribe(app, { interval: "day" });
    expect((await advance(app, "10d")).applied).toBe(10);
    const count = deps.store.data.transactions.length;
    expect((await advance(app, "0s")).applied).toBe(0);
    await query(app, {});
    expect(deps.store.data.transactions.length).toBe(count);
  });
});

describe("schedule rules", () => {
  test.each([
    {
      name: "daily",
      start: T0,
      terms: { interval: "day" },
      by: "3d",
      at: ["2026-01-16T10:00:00.000Z", "2026-01-17T10:00:00.000Z", "2026-01-18T10:00:00.000Z"],
    },
    {
      name: "every 2 weeks",
      start: T0,
      terms: { interval: "week", interval_count: "2" },
      by: "6w",
      at: ["2026-01-29T10:00:00.000Z", "2026-02-12T10:00:00.000Z", "2026-02-26T10:00:00.000Z"],
    },
    {
      name: "monthly from the 31st: month ends, back to the 31st",
      start: "2026-01-31T08:00:00.000Z",
      terms: { interval: "month" },
      by: "90d",
      at: ["2026-02-28T08:00:00.000Z", "2026-03-31T08:00:00.000Z", "2026-04-30T08:00:00.000Z"],
    },
    {
      name: "yearly",
      start: T0,
      terms: { interval: "year" },
      by: "1096d",
      at: ["2027-01-15T10:00:00.000Z", "2028-01-15T10:00:00.000Z", "2029-01-15T10:00:00.000Z"],
    },
    {
      name: "contract_start later than the payment delays the schedule",
      start: T0,
      terms: { interval: "month", contract_start: "2026-03-01" },
      by: "120d",
      at: ["2026-04-01T00:00:00.000Z", "2026-05-01T00:00:00.000Z"],
    },
    {
      name: "contract_end stops it: no deduction on or after that day",
      start: T0,
      terms: { interval: "month", contract_end: "2026-05-15" },
      by: "365d",
      at: ["2026-02-15T10:00:00.000Z", "2026-03-15T10:00:00.000Z", "2026-04-15T10:00:00.000Z"],
    },
    {
      name: "billing_cycle counts the first payment",
      start: T0,
      terms: { interval: "week", billing_cycle: 3 },
      by: "365d",
      at: ["2026-01-22T10:00:00.000Z", "2026-01-29T10:00:00.000Z"],
    },
  ])("$name", async ({ start, terms, by, at }) => {
    const { app } = await sandbox(start);
    const s = await subscribe(app, terms, { amount: "12.00" });
    await advance(app, by);
    expect(await deductions(app, s)).toEqual(at.map((t) => [t, "12.00"]));
  });

  test.each([
    ["billing_cycle", -1, "must be 0 (no limit) or more"],
    ["promotion_cycle", -2, "must be 0 or more"],
  ])("a negative %s is refused, naming the field", async (field, value, message) => {
    const { app } = await sandbox();
    const res = await postAuthorise(app, directPayment({ ...SHOP, subscription: { interval: "month", [field]: value } }));
    expect(res.status).toBe(400);
    expect(textOf(parseXml(res.text).result_info)).toBe(`I0002:Invalid field: subscription.${field} ${message}`);
  });

  test("with billing_cycle 0 and no contract_end it goes on: a daily one, ten years on", async () => {
    const { app } = await sandbox();
    const s = await subscribe(app, { interval: "day", billing_cycle: 0 }, { expiration_year: "2040" });
    await advance(app, "3650d");
    const view = await operatorView(app, s.recurring_id);
    expect(view).toMatchObject({ state: "active", recurring_status: "1", deductions: 3651, next_deduction_at: "2036-01-14T10:00:00.000Z" });
  });

  test("the schedule ends with contract_end: finished right after its last deduction", async () => {
    const { app } = await sandbox();
    const s = await subscribe(app, { interval: "month", contract_end: "2026-05-15" });
    await advance(app, "91d"); // 2026-04-16: the April deduction was the last one
    expect(await operatorView(app, s.recurring_id)).toMatchObject({ state: "finished", deductions: 4 });
  });

  test("billing_cycle 1: the first payment is the only charge, finished at once", async () => {
    const { app } = await sandbox();
    const s = await subscribe(app, { interval: "month", billing_cycle: 1 });
    const res = await query(app, { order_no: s.order_no });
    expect(res.body.orders_list[0].subscription_result).toMatchObject({ recurring_id: s.recurring_id, recurring_status: "2", recurring_deduction_time: "" });
    await advance(app, "365d");
    expect(await deductions(app, s)).toEqual([]);
  });

  test("an account that captures automatically gets paid deductions (3000)", async () => {
    const { app } = await sandbox();
    const s = await subscribe(app, { interval: "month", billing_cycle: 2 }, { ...ACME, account_id: "A10002" });
    await advance(app, "31d");
    const res = await request(app)
      .post("/v1/retrievalTrans")
      .type("form")
      .send({ merchant_id: ACME.merchant_id, account_id: "A10002", encryption_data: ANY_SIGNATURE, order_no: `${s.order_no}-R02` });
    expect(res.body.orders_list[0]).toMatchObject({ payment_status: "3000", amount: "10.00", subscription_result: { recurring_status: "2" } });
  });
});

describe("a failed deduction suspends the subscription", () => {
  test("contract_amount ending in .51 (insufficient funds): suspended, nothing more charged", async () => {
    const { app, deps } = await sandbox();
    const emit = vi.spyOn(deps.notifier, "emit");
    const s = await subscribe(app, { interval: "month", billing_cycle: 12, contract_amount: "10.51" }, { amount: "10.00" });
    await advance(app, "365d");
    const view = await operatorView(app, s.recurring_id);
    expect(view).toMatchObject({ state: "suspended", recurring_status: "3", deductions: 1 });
    expect(view.transactions.map((t) => [t.order_no, t.payment_status, t.result])).toEqual([
      [s.order_no, "2000", "success"],
      [`${s.order_no}-R02`, "6000", "insufficient_funds"],
    ]);
    const res = await query(app, { order_no: `${s.order_no}-R02` });
    expect(res.body.orders_list[0].subscription_result).toMatchObject({ recurring_status: "3", recurring_deduction_time: "2026-02-15 10:00:00" });
    expect(subscriptionEvents(emit).map((e) => e.event)).toEqual(["subscription.deduction_failed", "subscription.suspended"]);
  });

  test("a scenario rule for operation recurring decides each deduction (here: the 4th fails)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-scenarios-"));
    const rules = [
      { id: "fourth-deduction-fails", when: { operation: "recurring", deduction: "4" }, then: { outcome: "do_not_honor" } },
      { id: "approve", when: { operation: ["authorise", "recurring"] }, then: { outcome: "approved" } },
    ];
    writeFileSync(join(dir, "x.json"), JSON.stringify({ name: "x", description: "recurring fails at the fourth charge", rules }));
    const { app } = await sandbox(T0, { scenarios: dir, scenario: "x" });
    const s = await subscribe(app, { interval: "week" });
    await advance(app, "365d");
    const view = await operatorView(app, s.recurring_id);
    expect(view).toMatchObject({ state: "suspended", deductions: 3 });
    expect(view.transactions.map((t) => t.result)).toEqual(["success", "success", "success", "do_not_honor"]);
  });

  test("a card on file that expires: the first deduction after its month fails", async () => {
    const { app } = await sandbox();
    const s = await subscribe(app, { interval: "month" }, { expiration_month: "02", expiration_year: "2026" });
    await advance(app, "365d");
    const view = await operatorView(app, s.recurring_id);
    expect(view.transactions.map((t) => [t.created_at, t.result])).toEqual([
      [T0, "success"],
      ["2026-02-15T10:00:00.000Z", "success"],
      ["2026-03-15T10:00:00.000Z", "expired_card"],
    ]);
    expect(view.state).toBe("suspended");
  });

  test("a fixture token of a declining card declines its deductions", async () => {
    // a tester's fixtures: the fixture subscription charges the declining fixture card
    const dir = mkdtempSync(join(tmpdir(), "sandgate-fixtures-"));
    cpSync(defaultFixturesDir, dir, { recursive: true });
    const file = join(dir, "subscriptions.json");
    writeFileSync(file, readFileSync(file, "utf8").replace('"tok_acme_visa_4242"', '"tok_acme_decline_0002"'));
    const { app } = await sandbox("2026-11-01T00:00:00.000Z", { fixtures: dir });
    await advance(app, "10d");
    const view = await operatorView(app, "R20261009000001");
    expect(view).toMatchObject({ state: "suspended", recurring_status: "3" });
    expect(view.transactions.at(-1)).toMatchObject({ order_no: "ORD-1009-R02", result: "do_not_honor", payment_status: "6000" });
  });
});

describe("a first payment voided before capture", () => {
  test("suspends the subscription at its next deduction, without a charge", async () => {
    const { app } = await sandbox();
    const s = await subscribe(app, { interval: "month" });
    const voided = await request(app)
      .post("/v1/cancel")
      .send({
        ...SHOP,
        encryption_data: ANY_SIGNATURE,
        cancel_orders: [{ transaction_id: s.transaction_id, order_no: s.order_no, currency: "USD", amount: "10.00" }],
      });
    expect(voided.body.cancel_orders[0].cancel_status).toBe("1");
    await advance(app, "70d");
    expect(await operatorView(app, s.recurring_id)).toMatchObject({ state: "suspended", recurring_status: "3", deductions: 1 });
    expect(await deductions(app, s)).toEqual([]);
  });
});

describe("the fixture subscription (R20261009000001, next deduction 2026-11-09)", () => {
  test("a sandbox started after its time catches up at boot, once", async () => {
    const { app, deps } = await sandbox("2026-11-22T12:00:00.000Z");
    const res = await request(app)
      .post("/v1/retrievalTrans")
      .type("form")
      .send({ merchant_id: ACME.merchant_id, account_id: "A10002", encryption_data: ANY_SIGNATURE, order_no: "ORD-1009,ORD-1009-R02" });
    const [first, second] = res.body.orders_list;
    expect(second).toMatchObject({ order_no: "ORD-1009-R02", amount: "9.99", payment_status: "3000", transaction_date: "20261109000000" });
    for (const o of [first, second])
      expect(o.subscription_result).toMatchObject({ recurring_id: "R20261009000001", recurring_status: "1", recurring_deduction_time: "2026-12-09 00:00:00" });
    const count = deps.store.data.transactions.length;
    await request(app).get("/__sandbox/subscriptions");
    expect(deps.store.data.transactions.length).toBe(count);
  });

  test("its 12 charges end on 2027-09-09, before contract_end", async () => {
    const { app } = await sandbox("2026-11-01T00:00:00.000Z");
    await advance(app, "730d");
    const view = await operatorView(app, "R20261009000001");
    expect(view).toMatchObject({ state: "finished", deductions: 12 });
    expect(view.transactions.at(-1)).toMatchObject({ order_no: "ORD-1009-R12", created_at: "2027-09-09T00:00:00.000Z" });
  });
});

describe("POST /v1/subscription/cancel", () => {
  test("cancels: recurring_status 0, no deduction afterwards, the query shows it", async () => {
    const { app, deps } = await sandbox();
    const emit = vi.spyOn(deps.notifier, "emit");
    const s = await subscribe(app, { interval: "month" });
    await advance(app, "40d"); // one deduction, on 2026-02-15
    const res = await cancel(app, { recurring_id: s.recurring_id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      merchant_id: SHOP.merchant_id,
      account_id: SHOP.account_id,
      encryption_data: expect.stringMatching(/^[0-9a-f]{64}$/),
      return_status: "1",
      return_message: "OK",
      recurring_id: s.recurring_id,
      recurring_status: "0",
    });
    expect(subscriptionEvents(emit).map((e) => e.event)).toEqual(["subscription.deducted", "subscription.cancelled"]);

    await advance(app, "365d");
    expect(await deductions(app, s)).toHaveLength(1);
    expect(subscriptionEvents(emit)).toHaveLength(2);
    const q = await query(app, { order_no: s.order_no });
    expect(q.body.orders_list[0].subscription_result).toMatchObject({ recurring_status: "0", recurring_deduction_time: "" });
  });

  test("cancelling twice: return_status 0 with a code that says so, recurring_status still 0", async () => {
    const { app } = await sandbox();
    const s = await subscribe(app, { interval: "month" });
    await cancel(app, { recurring_id: s.recurring_id });
    const again = await cancel(app, { recurring_id: s.recurring_id });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ return_status: "0", recurring_id: s.recurring_id, recurring_status: "0" });
    expect(again.body.return_message).toMatch(/^E0502:Subscription already cancelled: /);
  });

  test.each([
    ["the first payment's order_no", (s: Started) => ({ order_no: s.order_no })],
    ["a deduction's order_no", (s: Started) => ({ order_no: `${s.order_no}-R02` })],
    ["recurring_id and order_no together", (s: Started) => ({ recurring_id: s.recurring_id, order_no: s.order_no })],
  ])("by %s", async (_name, fields) => {
    const { app } = await sandbox();
    const s = await subscribe(app, { interval: "month" });
    await advance(app, "31d");
    const res = await cancel(app, fields(s));
    expect(res.body).toMatchObject({ return_status: "1", recurring_id: s.recurring_id, recurring_status: "0" });
  });

  test.each([
    ["an unknown recurring_id", () => ({ recurring_id: "R00000000000000" })],
    ["an unknown order_no", () => ({ order_no: "NO-SUCH-ORDER" })],
    ["recurring_id and an order_no of another subscription", (s: Started) => ({ recurring_id: s.recurring_id, order_no: "ORD-1009" })],
  ])("%s: 404 E0501, nothing changes", async (_name, fields) => {
    const { app } = await sandbox();
    const s = await subscribe(app, { interval: "month" });
    const res = await cancel(app, fields(s));
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ return_status: "0", recurring_status: "" });
    expect(res.body.return_message).toMatch(/^E0501:Subscription not found: no subscription with /);
    expect((await operatorView(app, s.recurring_id)).state).toBe("active");
  });

  test("another merchant's or account's subscription is not found", async () => {
    const { app } = await sandbox();
    const s = await subscribe(app, { interval: "month" });
    for (const other of [
      { ...SHOP, merchant_id: "SUBS-OTHER" },
      { ...SHOP, account_id: "SUBS-ACC-2" },
    ]) {
      const res = await cancel(app, { recurring_id: s.recurring_id }, other);
      expect(res.status).toBe(404);
    }
    expect((await operatorView(app, s.recurring_id)).state).toBe("active");
  });

  test("a finished subscription cannot be cancelled (E0503, status 2); a suspended one can", async () => {
    const { app } = await sandbox();
    const finished = await subscribe(app, { interval: "month", billing_cycle: 1 });
    const res = await cancel(app, { recurring_id: finished.recurring_id });
    expect(res.body).toMatchObject({ return_status: "0", recurring_status: "2" });
    expect(res.body.return_message).toMatch(/^E0503:/);

    const suspended = await subscribe(app, { interval: "month", contract_amount: "10.51" });
    await advance(app, "31d");
    expect(await cancel(app, { recurring_id: suspended.recurring_id })).toMatchObject({ body: { return_status: "1", recurring_status: "0" } });
  });

  test("neither recurring_id nor order_no: 400 naming the field", async () => {
    const { app } = await sandbox();
    const res = await cancel(app, {});
    expect(res.status).toBe(400);
    expect(res.body.return_message).toMatch(/^I0001:.*recurring_id/);
    expect(res.body.errors).toEqual([{ field: "recurring_id", message: "is required (or order_no)" }]);
  });

  test("strict signatures: the real scheme is accepted, a wrong value refused; the response is signed", async () => {
    const { app } = await sandbox(T0, { signatureMode: "strict" });
    const body = directPayment({ subscription: { interval: "month" } });
    body.encryption_data = signRequest("authorise", body, ACME.key);
    const recurringId = textOf(parseXml((await postAuthorise(app, body)).text).recurring_id);

    const fields = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, recurring_id: recurringId };
    const wrong = await request(app)
      .post("/v1/subscription/cancel")
      .send({ ...fields, encryption_data: ANY_SIGNATURE });
    expect(wrong.status).toBe(400);
    expect(wrong.body.return_message).toMatch(/^I0014:/);

    const res = await request(app)
      .post("/v1/subscription/cancel")
      .send({ ...fields, encryption_data: signRequest("subscriptionCancel", fields, ACME.key) });
    expect(res.body).toMatchObject({ return_status: "1", recurring_status: "0" });
    expect(res.body.encryption_data).toBe(signResponseFields("subscriptionCancel", res.body, ACME.key));
  });

  test("a form body works too", async () => {
    const { app } = await sandbox();
    const s = await subscribe(app, { interval: "month" });
    const res = await request(app)
      .post("/v1/subscription/cancel")
      .type("form")
      .send({ ...SHOP, encryption_data: ANY_SIGNATURE, recurring_id: s.recurring_id });
    expect(res.body).toMatchObject({ return_status: "1", recurring_status: "0" });
  });
});

describe("GET /__sandbox/subscriptions", () => {
  test("lists a merchant's subscriptions with their status and charges", async () => {
    const { app } = await sandbox();
    const s = await subscribe(app, { interval: "week", contract_name: "Weekly box" }, { order_no: nextOrderNo("OPS") });
    await advance(app, "15d");
    const res = await request(app).get("/__sandbox/subscriptions").query({ merchant_id: SHOP.merchant_id });
    expect(res.status).toBe(200);
    expect(res.body.subscriptions).toHaveLength(1);
    expect(res.body.subscriptions[0]).toMatchObject({
      recurring_id: s.recurring_id,
      contract_name: "Weekly box",
      state: "active",
      recurring_status: "1",
      deductions: 3,
    });
    expect(res.body.subscriptions[0].transactions.map((t: { order_no: string }) => t.order_no)).toEqual([s.order_no, `${s.order_no}-R02`, `${s.order_no}-R03`]);
  });
});

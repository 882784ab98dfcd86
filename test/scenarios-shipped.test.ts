// Each shipped scenario answers as its description promises: request → expected outcome, chosen
// per request with X-Sandbox-Scenario. The rule that decided is named in X-Sandbox-Rule.
import request from "supertest";
import { describe, expect, test } from "vitest";
import { apmPayment, directPayment, makeApp, parseXml, storedNotifications, storedTransactions } from "./helpers.js";
import { ENVELOPE, one, pay, paymentIn } from "./lifecycle-helpers.js";

type Case = { scenario: string; card?: string; amount?: string; status: string; code: string; rule: RegExp };

const PAYMENTS: Case[] = [
  { scenario: "default", card: "4242424242424242", status: "1", code: "0000", rule: /^default\/visa-approve$/ },
  { scenario: "default", card: "4000000000000002", status: "0", code: "D0005", rule: /^default\/decline-generic$/ },
  { scenario: "default", card: "5555555555554444", amount: "10.51", status: "0", code: "D0051", rule: /^default\/amount-ending-51$/ },
  { scenario: "happy-path", card: "4000000000000002", status: "1", code: "0000", rule: /^happy-path\/approve-every-payment$/ },
  { scenario: "happy-path", card: "5555555555554444", amount: "10.51", status: "1", code: "0000", rule: /^happy-path\// },
  { scenario: "declines", card: "4242424242424242", status: "0", code: "D0005", rule: /^declines\/visa-declined$/ },
  { scenario: "declines", card: "5555555555554444", status: "0", code: "D0005", rule: /^declines\/decline-everything-else$/ },
  { scenario: "declines", card: "4000000000009995", status: "0", code: "D0051", rule: /^default\/decline-insufficient-funds$/ },
  { scenario: "3ds", card: "4242424242424242", status: "-1", code: "P0001", rule: /^3ds\/visa-challenged$/ },
  { scenario: "3ds", card: "5555555555554444", status: "1", code: "0000", rule: /^3ds\/mastercard-frictionless$/ },
  { scenario: "3ds", card: "4000008400001629", status: "0", code: "D0301", rule: /^default\/threeds-failed$/ },
  { scenario: "risk-review", card: "4242424242424242", status: "-2", code: "R0001", rule: /^risk-review\/visa-held-for-review$/ },
  { scenario: "risk-review", card: "4242424242424242", amount: "1500.00", status: "0", code: "R0002", rule: /^risk-review\/big-amounts-rejected$/ },
  { scenario: "refunds-fail-later", card: "4242424242424242", status: "1", code: "0000", rule: /^default\/visa-approve$/ },
  { scenario: "partial-batch-failures", card: "4000000000000002", status: "0", code: "D0005", rule: /^default\// },
  { scenario: "payout-failures", card: "4242424242424242", status: "1", code: "0000", rule: /^default\/visa-approve$/ },
  {
    scenario: "notifications-chaos",
    card: "4000000000000002",
    status: "0",
    code: "D0005",
    rule: /^notifications-chaos\/late-and-twice \+ default\/decline-generic$/,
  },
  { scenario: "slow-and-flaky", card: "4242424242424242", status: "1", code: "0000", rule: /^slow-and-flaky\/later-attempts-slow \+ default\/visa-approve$/ },
];

describe("payments per shipped scenario", () => {
  test.each(PAYMENTS)("$scenario: card $card amount $amount → order_status $status ($code)", async ({ scenario, card, amount, status, code, rule }) => {
    const { app } = await makeApp();
    const body = directPayment({ card, amount: amount ?? "10.00" });
    const send = () => request(app).post("/v1/authorise").set("X-Sandbox-Scenario", scenario).send(body);
    // slow-and-flaky fails the first two attempts of an order on purpose
    if (scenario === "slow-and-flaky") {
      const first = send();
      await expect(Promise.race([first.then(() => "answered"), new Promise((r) => setTimeout(() => r("hung"), 300))])).resolves.toBe("hung");
      const second = await send();
      expect(second.status).toBe(500);
    }
    const res = await send();
    expect(res.status).toBe(200);
    const xml = parseXml(res.text);
    expect(xml.order_status).toBe(status);
    expect(String(xml.result_info).split(":")[0]).toBe(code);
    expect(res.headers["x-sandbox-rule"]).toMatch(rule);
  });
});

describe("batches per shipped scenario", () => {
  test("partial-batch-failures: one capture of .13 is declined, the others in the batch go through", async () => {
    const { app } = await makeApp();
    const a = await pay(app, { amount: "20.00" });
    const b = await pay(app, { amount: "20.00" });
    const res = await request(app)
      .post("/v1/capture")
      .set("X-Sandbox-Scenario", "partial-batch-failures")
      .send({ ...ENVELOPE, capture_orders: [{ ...a, amount: "10.13" }, b] });
    expect(res.body.capture_orders.map((o: Record<string, string>) => o.capture_status)).toEqual(["0", "1"]);
    // the gateway's own text; the rule only in X-Sandbox-Rule (a merchant parses error_message)
    expect(res.body.capture_orders[0].error_message).toBe("E0103:Capture declined by the acquirer");
    expect(res.headers["x-sandbox-rule"]).toContain("partial-batch-failures/capture-declined-13");
    expect(res.text).not.toMatch(/partial-batch-failures|scenario/);
  });

  test("partial-batch-failures: cancel of an order_no ending -fail and refunds of 500.00+ are declined", async () => {
    const { app } = await makeApp();
    const doomed = await pay(app, { order_no: `X-${Date.now()}-fail` });
    const fine = await pay(app);
    const cancels = await request(app)
      .post("/v1/cancel")
      .set("X-Sandbox-Scenario", "partial-batch-failures")
      .send({ ...ENVELOPE, cancel_orders: [doomed, fine] });
    expect(cancels.body.cancel_orders.map((o: Record<string, string>) => o.cancel_status)).toEqual(["0", "1"]);
    const big = await paymentIn(app, "paid");
    const bigPay = await pay(app, { amount: "900.00" });
    await one(app, "capture", bigPay);
    const refunds = await request(app)
      .post("/v1/refund")
      .set("X-Sandbox-Scenario", "partial-batch-failures")
      .send({
        ...ENVELOPE,
        refund_orders: [
          { ...bigPay, refund_amount: "600.00" },
          { ...big, refund_amount: "10.00" },
        ],
      });
    expect(refunds.body.refund_orders.map((o: Record<string, string>) => o.refund_status)).toEqual(["0", "1"]);
    expect(refunds.body.refund_orders[0].refund_message).toMatch(/^E0404:/);
  });

  test("refunds-fail-later: accepted, then failed two seconds later", async () => {
    const { app } = await makeApp();
    const p = await paymentIn(app, "paid");
    const res = await request(app)
      .post("/v1/refund")
      .set("X-Sandbox-Scenario", "refunds-fail-later")
      .send({ ...ENVELOPE, refund_orders: [{ ...p, refund_amount: "10.00" }] });
    expect(res.body.refund_orders[0].refund_status).toBe("1");
    await request(app).post("/__sandbox/clock").send({ advance: "3s" });
    const search = await request(app)
      .post("/v1/retrievalRefund")
      .send({ ...ENVELOPE, transaction_id: p.transaction_id });
    expect(search.body.refund_orders[0].refund_status).toBe("3");
  });

  test("happy-path: refunds are processed within a second", async () => {
    const { app } = await makeApp();
    const p = await paymentIn(app, "paid");
    await request(app)
      .post("/v1/refund")
      .set("X-Sandbox-Scenario", "happy-path")
      .send({ ...ENVELOPE, refund_orders: [{ ...p, refund_amount: "10.13" }] });
    await request(app).post("/__sandbox/clock").send({ advance: "1s" });
    const search = await request(app)
      .post("/v1/retrievalRefund")
      .send({ ...ENVELOPE, transaction_id: p.transaction_id });
    expect(search.body.refund_orders[0].refund_status).toBe("2");
  });
});

describe("the scenario list", () => {
  test("lists every shipped scenario with its description", async () => {
    const { app } = await makeApp();
    const res = await request(app).get("/__sandbox/scenarios");
    const names = res.body.scenarios.map((s: { name: string }) => s.name).sort();
    expect(names).toEqual(
      [
        "3ds",
        "declines",
        "default",
        "happy-path",
        "notifications-chaos",
        "partial-batch-failures",
        "payout-failures",
        "refunds-fail-later",
        "risk-review",
        "slow-and-flaky",
      ].sort(),
    );
    for (const s of res.body.scenarios) expect(s.description.length).toBeGreaterThan(20);
    expect(res.body.global).toBe("default");
    expect(res.body.errors).toEqual([]);
  });

  test("an unknown X-Sandbox-Scenario is refused in the operation's format", async () => {
    const { app } = await makeApp();
    const before = (await storedTransactions(app)).length; // whatever was due at start happens first
    const res = await request(app).post("/v1/authorise").set("X-Sandbox-Scenario", "nope").send(directPayment());
    expect(res.status).toBe(400);
    expect(parseXml(res.text).result_info).toMatch(/^I0041:Unknown scenario: "nope"/);
    expect((await storedTransactions(app)).length).toBe(before);
    const json = await request(app)
      .post("/v1/capture")
      .set("X-Sandbox-Scenario", "nope")
      .send({ ...ENVELOPE, capture_orders: [{}] });
    expect(json.status).toBe(400);
    expect(json.body).toMatchObject({ return_status: "0", return_message: expect.stringMatching(/^I0041:/) });
  });
});

/** A valid LOCAL payout of 100.00 USD to the given account number. */
const payout = (accountNumber: string, extra: Record<string, unknown> = {}) => ({
  merchant_id: "M10001",
  account_id: "A10001",
  encryption_data: "a".repeat(64),
  request_id: crypto.randomUUID(),
  payment_currency: "USD",
  payment_amount: "100.00",
  payment_method: "LOCAL",
  beneficiary: { first_name: "Ann", last_name: "Lee", bank_details: { account_number: accountNumber, bank_country_code: "US" } },
  ...extra,
});

describe("payout-failures", () => {
  test("account suffixes keep their failure types; other payouts go PENDING and bounce a minute later", async () => {
    const { app } = await makeApp();
    const send = (n: string) => request(app).post("/v1/payout").set("X-Sandbox-Scenario", "payout-failures").send(payout(n));
    const noAccount = await send("123450001");
    expect(noAccount.body).toMatchObject({ status: "FAILED", failure_type: "NO_ACCOUNT" });
    const other = await send("123456789");
    expect(other.body.status).toBe("PENDING");
    expect(other.headers["x-sandbox-rule"]).toBe("payout-failures/payout-completes");
    await request(app).post("/__sandbox/clock").send({ advance: "61s" });
    const listed = await request(app).get("/__sandbox/payouts?merchant_id=M10001");
    const bounced = listed.body.payouts.find((p: { transaction_id: string }) => p.transaction_id === other.body.transaction_id);
    expect(bounced).toMatchObject({ status: "FAILED", failure_type: "ACCOUNT_CLOSED" });
  });
});

describe("notifications-chaos", () => {
  test("payment notifications are delayed 30 s and sent twice; refund notifications are dropped, also when the refund settles", async () => {
    const { app } = await makeApp();
    const notify_url = "http://127.0.0.1:9/hook"; // nothing listens: only what was queued matters here
    const chaos = { "X-Sandbox-Scenario": "notifications-chaos" };
    const paid = await request(app)
      .post("/v1/authorise")
      .set(chaos)
      .send(directPayment({ notify_url, account_id: "A10002" }));
    expect(paid.headers["x-sandbox-rule"]).toBe("notifications-chaos/late-and-twice + default/visa-approve");
    const tx = String(parseXml(paid.text).transaction_id);
    const payment = (await storedNotifications(app, { event: "payment.paid" })).find((n) => n.payload.data.transaction_id === tx)!;
    expect(payment.behaviour).toEqual({ delay_seconds: 30, duplicate: 1, drop: false });
    expect(Date.parse(payment.due_at) - Date.parse(payment.created_at)).toBe(30_000);
    expect(payment.deliveries_left).toBe(2);

    const order = { transaction_id: tx, order_no: String(parseXml(paid.text).order_no), currency: "USD", amount: "10.00", refund_amount: "5.00" };
    await request(app)
      .post("/v1/refund")
      .set(chaos)
      .send({ ...ENVELOPE, account_id: "A10002", refund_orders: [order] });
    await request(app).post("/__sandbox/clock").send({ advance: "10s" });
    const refunds = (await storedNotifications(app)).filter((n) => n.event.startsWith("refund.") && n.payload.data.transaction_id === tx);
    expect(refunds.map((n) => [n.event, n.state])).toEqual([
      ["refund.accepted", "dropped"],
      ["refund.processed", "dropped"],
    ]);
  });
});

describe("APM e-mail markers of default", () => {
  test.each([
    ["jane@example.com", "1000", "builtin/apm-pending"],
    ["jane@apm-paid.test", "3000", "default/apm-paid"],
    ["jane@apm-fail.test", "6000", "default/apm-failed"],
  ])("%s → payment_status %s", async (email, status, rule) => {
    const { app } = await makeApp();
    const body = apmPayment({ shopper_email: email });
    const res = await request(app).post("/v1/authorise").send(body);
    expect(res.status).toBe(200);
    expect(parseXml(res.text).issuer_url).toMatch(/^http:\/\/.+\/pay\/apm\/[0-9a-f]{24}$/);
    expect(res.headers["x-sandbox-rule"]).toBe(rule);
    const query = await request(app)
      .post("/v1/retrievalTrans")
      .send({ ...ENVELOPE, account_id: "A10002", order_no: body.order_no });
    expect(query.body.orders_list[0].payment_status).toBe(status);
  });
});

describe("notifications-chaos on payouts", () => {
  test("a payout's notifications come three times, also when it completes later", async () => {
    const { app } = await makeApp();
    const res = await request(app)
      .post("/v1/payout")
      .set("X-Sandbox-Scenario", "notifications-chaos")
      .send(payout("555550008", { notify_url: "http://127.0.0.1:9/payouts" }));
    expect(res.body.status).toBe("PENDING");
    expect(res.headers["x-sandbox-rule"]).toBe("notifications-chaos/payouts-thrice + default/payout-completes-later");
    await request(app).post("/__sandbox/clock").send({ advance: "2h" });
    const sent = (await storedNotifications(app)).filter((n) => n.event.startsWith("payout."));
    expect(sent.map((n) => [n.event, n.behaviour.duplicate])).toEqual([
      ["payout.pending", 2],
      ["payout.completed", 2],
    ]);
  });
});

// X-Sandbox-Outcome: one request names its outcome from data/outcomes.json, stronger than every
// scenario choice; every order of a batch; refused (400, nothing changed) when the operation has no
// such outcome or none at all; named in X-Sandbox-Rule, the request log and coverage. And the payer
// pages' counterpart, ?outcome=<name> on the page's address.
import { readFileSync } from "node:fs";
import request from "supertest";
import { beforeEach, describe, expect, test } from "vitest";
import type { App } from "../src/server/app.js";
import type { CoverageReport } from "../src/scenarios/coverage.js";
import { ACME, ANY_SIGNATURE, apmPayment, directPayment, makeApp, nextOrderNo, parseXml, storedTransactions, textOf } from "./helpers.js";
import { ENVELOPE, batch, pay, paymentIn } from "./lifecycle-helpers.js";

const HEADER = "X-Sandbox-Outcome";
const RETURN = "https://shop.example.com/return";

let app: App;
beforeEach(async () => {
  ({ app } = await makeApp());
});

const authorise = (body: Record<string, unknown>, headers: Record<string, string> = {}) => request(app).post("/v1/authorise").set(headers).send(body);
const transaction = async (orderNo: string) => (await storedTransactions(app, { merchant_id: ACME.merchant_id, order_no: orderNo }))[0];
const loggedRule = async (orderNo: string) => {
  const res = await request(app).get("/__sandbox/requests").query({ merchant_id: ACME.merchant_id, order_no: orderNo });
  return (res.body.requests as { rule: string }[]).map((r) => r.rule);
};
/** The path of a page address (supertest talks to the app directly). */
const pathOf = (url: string) => new URL(url.replace(/&amp;/g, "&")).pathname;

describe("payments", () => {
  test("a direct payment with the approving card ends with the named decline, the header named as the rule", async () => {
    const body = directPayment({ card: "4242424242424242" });
    const res = await authorise(body, { [HEADER]: "insufficient_funds" }).expect(200);
    const xml = parseXml(res.text);
    expect(textOf(xml.order_status)).toBe("0");
    expect(textOf(xml.result_info)).toBe("D0051:Insufficient funds");
    expect(res.headers["x-sandbox-rule"]).toBe("header/X-Sandbox-Outcome: insufficient_funds");
    expect(await transaction(String(body.order_no))).toMatchObject({
      state: "declined",
      result: "insufficient_funds",
      transaction_id: textOf(xml.transaction_id),
    });
    expect(await loggedRule(String(body.order_no))).toEqual(["header/X-Sandbox-Outcome: insufficient_funds"]);
  });

  test("it beats X-Sandbox-Scenario, the merchant's bound scenario, the global scenario and an expired card", async () => {
    await request(app).put("/__sandbox/scenarios/global").send({ name: "3ds" }).expect(200);
    await request(app).put(`/__sandbox/scenarios/bindings/${ACME.merchant_id}`).send({ name: "declines" }).expect(200);
    const statusWith = async (headers: Record<string, string>, fields: Record<string, unknown> = {}) => {
      const res = await authorise(directPayment(fields), headers).expect(200);
      return [textOf(parseXml(res.text).order_status), res.headers["x-sandbox-rule"]];
    };
    expect(await statusWith({})).toEqual(["0", expect.stringMatching(/^declines\//)]);
    expect(await statusWith({ "X-Sandbox-Scenario": "risk-review" })).toEqual(["-2", expect.stringMatching(/^risk-review\//)]);
    expect(await statusWith({ "X-Sandbox-Scenario": "risk-review", [HEADER]: "approved" })).toEqual(["1", "header/X-Sandbox-Outcome: approved"]);
    expect(await statusWith({ [HEADER]: "approved" }, { expiration_year: "2020" })).toEqual(["1", "header/X-Sandbox-Outcome: approved"]);
    // a 3-D Secure challenge is an answer a direct payment can have: it waits at its page
    const challenged = parseXml((await authorise(directPayment(), { [HEADER]: "threeds_required" }).expect(200)).text);
    expect(textOf(challenged.order_status)).toBe("-1");
    expect(textOf(challenged.issuer_url)).toContain("/pay/3ds/");
  });

  test("an APM payment ends at once with the named outcome, or waits with apm_pending", async () => {
    const failed = apmPayment();
    const res = await authorise(failed, { [HEADER]: "apm_failed" }).expect(200);
    expect(res.headers["x-sandbox-rule"]).toBe("header/X-Sandbox-Outcome: apm_failed");
    expect(await transaction(String(failed.order_no))).toMatchObject({ state: "declined", result: "apm_failed" });
    const paid = apmPayment();
    await authorise(paid, { [HEADER]: "approved" }).expect(200);
    expect((await transaction(String(paid.order_no)))?.state).toBe("paid");
    const waiting = apmPayment();
    await authorise(waiting, { [HEADER]: "apm_pending" }).expect(200);
    expect((await transaction(String(waiting.order_no)))?.state).toBe("pending");
    // an APM payment has no 3-D Secure
    const refused = await authorise(apmPayment(), { [HEADER]: "threeds_required" }).expect(400);
    expect(textOf(parseXml(refused.text).result_info)).toMatch(
      /^I0042:Unknown outcome: "threeds_required" is not an outcome of apm \(have: approved, .*apm_pending/,
    );
  });
});

describe("batches: every order of the request", () => {
  test("a capture with capture_declined refuses every order; the payments stay authorised", async () => {
    const payments = [await pay(app), await pay(app)];
    const res = await request(app)
      .post("/v1/capture")
      .set(HEADER, "capture_declined")
      .send({ ...ENVELOPE, capture_orders: payments })
      .expect(200);
    expect(res.body.return_status).toBe("1");
    for (const order of res.body.capture_orders) {
      // the gateway's own text: what decided it is said in X-Sandbox-Rule, never in a field the merchant parses
      expect(order).toMatchObject({ capture_status: "0", error_message: "E0103:Capture declined by the acquirer" });
    }
    expect(res.headers["x-sandbox-rule"]).toBe("header/X-Sandbox-Outcome: capture_declined");
    expect(res.text).not.toMatch(/X-Sandbox|header\//);
    for (const p of payments) expect((await transaction(p.order_no))?.state).toBe("authorised");
    // without the header the same capture goes through
    expect((await batch(app, "capture", payments)).body.capture_orders.map((o: { capture_status: string }) => o.capture_status)).toEqual(["1", "1"]);
  });

  test("a refund with refund_fails_later is accepted now and fails when it settles", async () => {
    const p = await paymentIn(app, "paid");
    const res = await request(app)
      .post("/v1/refund")
      .set(HEADER, "refund_fails_later")
      .send({ ...ENVELOPE, refund_orders: [{ ...p, refund_amount: "40.00" }] })
      .expect(200);
    expect(res.body.refund_orders[0]).toMatchObject({ refund_status: "1", refund_reference_id: `${p.transaction_id}-01` });
    await request(app).post("/__sandbox/clock").send({ advance: "1m" }).expect(200);
    const search = await request(app)
      .post("/v1/retrievalRefund")
      .type("form")
      .send({ ...ENVELOPE, transaction_id: p.transaction_id })
      .expect(200);
    expect(search.body.refund_orders[0]).toMatchObject({ refund_status: "3", payment_status: "3000" });
  });
});

describe("payouts", () => {
  test("a payout with no_account fails with NO_ACCOUNT", async () => {
    const body = {
      ...ENVELOPE,
      request_id: crypto.randomUUID(),
      payment_currency: "USD",
      payment_amount: "100.00",
      payment_method: "SWIFT",
      beneficiary: { first_name: "Ann", last_name: "Lee", bank_details: { account_number: "123456789", bank_country_code: "US" } },
    };
    const res = await request(app).post("/v1/payout").set(HEADER, "no_account").send(body).expect(200);
    expect(res.body).toMatchObject({ status: "FAILED", failure_type: "NO_ACCOUNT" });
    expect(res.headers["x-sandbox-rule"]).toBe("header/X-Sandbox-Outcome: no_account");
  });
});

describe("the hosted checkout and the payer pages", () => {
  const checkout = async (headers: Record<string, string> = {}) => {
    const body = { ...ENVELOPE, order_no: nextOrderNo("CO"), currency: "EUR", amount: "42.50", return_url: RETURN };
    const res = await request(app).post("/v1/checkout").set(headers).send(body).expect(200);
    return { res, page: pathOf(/action="([^"]+)"/.exec(res.text)![1]!), order_no: body.order_no };
  };
  const card = { card: "4242424242424242", expiration_month: "12", expiration_year: "2030", security_code: "123", holder_name: "Jane Doe" };
  const returned = (location: string) => Object.fromEntries(new URL(location).searchParams);

  test("/v1/checkout keeps the outcome for the payer's card: the approving card ends with it", async () => {
    const { res, page, order_no } = await checkout({ [HEADER]: "insufficient_funds" });
    expect(res.headers["x-sandbox-rule"]).toBe("header/X-Sandbox-Outcome: insufficient_funds");
    expect((await transaction(order_no))?.state).toBe("pending");
    const paid = await request(app).post(page).type("form").send(card).expect(303);
    expect(returned(paid.headers.location!)).toMatchObject({ order_status: "0", result_info: "D0051:Insufficient funds" });
    const tx = await transaction(order_no);
    expect(tx).toMatchObject({ state: "declined", result: "insufficient_funds" });
    expect(tx?.history?.at(-1)?.rule).toBe("header/X-Sandbox-Outcome: insufficient_funds");
  });

  test("?outcome=<name> on a page's address ends the payment, GET or POST, as outcome=<name> in the form does", async () => {
    const opened = await checkout();
    const got = await request(app).get(opened.page).query({ outcome: "stolen_card" }).expect(303);
    expect(returned(got.headers.location!)).toMatchObject({ order_status: "0", result_info: expect.stringMatching(/^D\d{4}:/) });
    expect((await transaction(opened.order_no))?.result).toBe("stolen_card");
    // theForm lands with every request field: the address's outcome still decides
    const landed = await checkout();
    await request(app).post(`${landed.page}?outcome=paid`).type("form").send({ allParams: "x", order_no: landed.order_no }).expect(303);
    expect((await transaction(landed.order_no))?.state).toBe("authorised");

    const apm = parseXml((await authorise(apmPayment({ return_url: RETURN })).expect(200)).text);
    const page = pathOf(textOf(apm.issuer_url));
    const json = await request(app).get(page).query({ outcome: "failed" }).set("accept", "application/json").expect(200);
    expect(json.body).toMatchObject({ order_status: "0", result_info: "D0062:Refused by the payer's payment method" });
    // a second use changes nothing
    expect((await request(app).get(page).query({ outcome: "paid" }).set("accept", "application/json")).status).toBe(409);
  });

  test("a page refuses an outcome it does not offer, with the list, and the payment still waits", async () => {
    const { page, order_no } = await checkout();
    const res = await request(app).get(page).query({ outcome: "declined" }).expect(400);
    expect(res.type).toBe("text/html");
    expect(res.text).toContain("do_not_honor");
    expect((await transaction(order_no))?.state).toBe("pending");
  });
});

describe("refusals: 400 in the operation's format, with the names, nothing changed", () => {
  test("an unknown name, in XML, JSON and HTML", async () => {
    const before = (await storedTransactions(app)).length;
    const xml = await authorise(directPayment(), { [HEADER]: "insufficient_fund" }).expect(400);
    expect(textOf(parseXml(xml.text).result_info)).toMatch(
      /^I0042:Unknown outcome: "insufficient_fund" is not an outcome of authorise \(have: approved, do_not_honor, insufficient_funds, .*threeds_required/,
    );
    expect(textOf(parseXml(xml.text).result_info)).not.toContain("apm_pending");

    const p = await pay(app);
    const json = await request(app)
      .post("/v1/capture")
      .set(HEADER, "refund_declined")
      .send({ ...ENVELOPE, capture_orders: [p] })
      .expect(400);
    expect(json.body).toMatchObject({
      return_status: "0",
      return_message: 'I0042:Unknown outcome: "refund_declined" is not an outcome of capture (have: captured, capture_declined)',
      capture_orders: [],
    });
    expect((await transaction(p.order_no))?.state).toBe("authorised");

    const html = await request(app)
      .post("/v1/checkout")
      .set(HEADER, "nope")
      .send({ ...ENVELOPE, order_no: nextOrderNo("CO"), currency: "EUR", amount: "1.00" })
      .expect(400);
    expect(html.type).toBe("text/html");
    expect(html.text).toMatch(/I0042:Unknown outcome: &quot;nope&quot; is not an outcome of checkout \(have: approved, .*checkout_pending/);
    // only the approved payment above was created
    expect((await storedTransactions(app)).length).toBe(before + 1);
  });

  test("an operation without outcomes refuses the header", async () => {
    for (const [path, body] of [
      ["/v1/retrievalTrans", { ...ENVELOPE, order_no: "ORD-1002" }],
      ["/v1/retrievalRefund", { ...ENVELOPE, order_no: "ORD-1003" }],
      ["/v1/subscription/cancel", { ...ENVELOPE, recurring_id: "R1" }],
      ["/v1/paymentMethods/optimise", { ...ENVELOPE, account_id: "A10002", currency: "BRL", amount: "100.00", billing_country: "BR" }],
    ] as const) {
      const res = await request(app).post(path).set(HEADER, "approved").send(body);
      expect(res.status, path).toBe(400);
      expect(res.body.return_message, path).toMatch(/^I0043:This operation has no outcomes to choose: \w+: send X-Sandbox-Outcome with a payment/);
    }
  });
});

test("coverage counts the outcome as produced, each order of a batch once", async () => {
  const merchant = { merchant_id: "CI-OUTCOME-1", account_id: "ACC-1" };
  const paid = await authorise(directPayment(merchant), { [HEADER]: "expired_card" }).expect(200);
  const approved = parseXml((await authorise(directPayment({ ...merchant, amount: "10.00" })).expect(200)).text);
  const order = { transaction_id: textOf(approved.transaction_id), order_no: textOf(approved.order_no), currency: "USD", amount: "10.00" };
  await request(app)
    .post("/v1/capture")
    .set(HEADER, "capture_declined")
    .send({ ...merchant, encryption_data: ANY_SIGNATURE, capture_orders: [order] })
    .expect(200);
  const checkout = await request(app)
    .post("/v1/checkout")
    .set(HEADER, "do_not_honor")
    .send({ ...merchant, encryption_data: ANY_SIGNATURE, order_no: nextOrderNo("CO"), currency: "USD", amount: "5.00" });
  expect(checkout.status).toBe(200);
  expect(paid.headers["x-sandbox-rule"]).toBe("header/X-Sandbox-Outcome: expired_card");
  const report = (await request(app).get("/__sandbox/coverage").query({ merchant_id: merchant.merchant_id })).body as CoverageReport;
  const produced = (operation: string) => report.operations.find((o) => o.operation === operation)!.produced;
  // the checkout's outcome is produced when the payer pays, not by the request that keeps it
  expect(produced("authorise")).toEqual({ expired_card: 1, approved: 1 });
  expect(produced("capture")).toEqual({ capture_declined: 1 });
});

test("the OpenAPI document lists the header, with the operation's names, where it is taken", async () => {
  const doc = (await request(app).get("/__sandbox/openapi.json").expect(200)).body as {
    paths: Record<string, { post: { parameters?: { name: string; in: string; schema: { enum?: string[] } }[] } }>;
  };
  const header = (path: string) => doc.paths[path]!.post.parameters?.find((p) => p.name === HEADER);
  expect(header("/v1/authorise")).toMatchObject({
    in: "header",
    schema: { enum: expect.arrayContaining(["insufficient_funds", "threeds_required", "apm_pending"]) },
  });
  expect(header("/v1/capture")?.schema.enum).toEqual(["captured", "capture_declined"]);
  expect(header("/v1/payout")?.schema.enum).toContain("no_account");
  expect(header("/v1/retrievalTrans")).toBeUndefined();
  expect(doc.paths["/v1/retrievalTrans"]!.post.parameters?.map((p) => p.name)).toEqual(["X-Sandbox-Scenario"]);
});

test("the example in docs/scenarios.md does what its comment says", async () => {
  const readme = readFileSync(new URL("../docs/scenarios.md", import.meta.url), "utf8");
  const m = /^curl -si -H '(X-Sandbox-Outcome): (\w+)' \$URL(\/v1\/\S+) -d "([^"]+)"\n# (.*)$/m.exec(readme);
  expect(m).not.toBeNull();
  const [, name, value, path, form, comment] = m!;
  const res = await request(app).post(path!).set(name!, value!).type("form").send(form!.replace("$SIG", ANY_SIGNATURE)).expect(200);
  expect(comment).toContain(`X-Sandbox-Rule: ${res.headers["x-sandbox-rule"]}`);
  const xml = parseXml(res.text);
  expect(comment).toContain(`<order_status>${textOf(xml.order_status)}</order_status><result_info>${textOf(xml.result_info)}</result_info>`);
});

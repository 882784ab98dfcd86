// Payer pages without a browser (PRODUCT.md §8): the 3-D Secure challenge, the APM page and the
// hosted checkout finish a pending payment by outcome=<name>, by the challenge code or by a card,
// answer 303 to return_url with the signed result (or JSON), notify, and refuse a second use.
import request from "supertest";
import { beforeEach, describe, expect, test } from "vitest";
import type { App } from "../src/server/app.js";
import type { Deps } from "../src/deps/deps.js";
import { ACME, ANY_SIGNATURE, apmPayment, directPayment, makeApp, nextOrderNo, parseXml, postAuthorise, signResponseFields, textOf } from "./helpers.js";

let app: App;
let deps: Deps;
beforeEach(async () => {
  ({ app, deps } = await makeApp());
});

const RETURN = "https://shop.example.com/return?cart=7";
const NOTIFY = "https://shop.example.com/notify";

/** The path of an issuer_url (supertest talks to the app directly). */
const pathOf = (url: string) => new URL(url).pathname;

async function challenged(overrides: Record<string, unknown> = {}) {
  const res = await postAuthorise(app, directPayment({ card: "4000002760003184", return_url: RETURN, notify_url: NOTIFY, ...overrides })).expect(200);
  const xml = parseXml(res.text);
  expect(textOf(xml.order_status)).toBe("-1");
  return { page: pathOf(textOf(xml.issuer_url)), transaction_id: textOf(xml.transaction_id) };
}

async function apm(overrides: Record<string, unknown> = {}) {
  const res = await postAuthorise(app, apmPayment({ return_url: RETURN, notify_url: NOTIFY, ...overrides })).expect(200);
  const xml = parseXml(res.text);
  return { page: pathOf(textOf(xml.issuer_url)), order_no: textOf(xml.order_no) };
}

async function checkout(overrides: Record<string, unknown> = {}) {
  const body = {
    merchant_id: ACME.merchant_id,
    account_id: ACME.account_id,
    order_no: nextOrderNo("CO"),
    currency: "EUR",
    amount: "42.50",
    return_url: RETURN,
    notify_url: NOTIFY,
    encryption_data: ANY_SIGNATURE,
    ...overrides,
  };
  const res = await request(app).post("/v1/checkout").send(body).expect(200);
  const action = /action="([^"]+)"/.exec(res.text)?.[1] ?? "";
  return { page: pathOf(action.replace(/&amp;/g, "&")), order_no: body.order_no };
}

const txOf = (orderNo: string) => deps.store.data.transactions.find((t) => t.order_no === orderNo)!;
const events = (transactionId: string) =>
  deps.store.data.notifications.filter((n) => (n.payload.data as { transaction_id?: string }).transaction_id === transactionId).map((n) => n.event);

/** The signed result on return_url, checked as a merchant checks it. */
function returned(location: string) {
  const url = new URL(location);
  expect(`${url.origin}${url.pathname}`).toBe("https://shop.example.com/return");
  expect(url.searchParams.get("cart")).toBe("7");
  const params = Object.fromEntries(url.searchParams);
  expect(params.encryption_data).toBe(signResponseFields("payer_return" as never, params, ACME.key));
  return params;
}

describe("3-D Secure challenge page", () => {
  test("GET shows the challenge with the documented code, and a CSP", async () => {
    const { page } = await challenged();
    const res = await request(app).get(page).expect(200);
    expect(res.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(res.text).toContain('id="documented-code">1234<');
    expect(res.text).toContain('value="threeds_passed"');
  });

  test.each([
    { body: { outcome: "threeds_passed" }, order_status: "1", result: "0000:Success", state: "authorised", threeds: "Y:Authenticated (challenge passed)" },
    { body: { challenge_code: "1234" }, order_status: "1", result: "0000:Success", state: "authorised", threeds: "Y:Authenticated (challenge passed)" },
    {
      body: { challenge_code: "0000" },
      order_status: "0",
      result: "D0301:3-D Secure authentication failed",
      state: "declined",
      threeds: "N:Not authenticated",
    },
    {
      body: { outcome: "threeds_failed" },
      order_status: "0",
      result: "D0301:3-D Secure authentication failed",
      state: "declined",
      threeds: "N:Not authenticated",
    },
    {
      body: { outcome: "abandoned" },
      order_status: "0",
      result: "C0003:3-D Secure challenge abandoned by the payer",
      state: "cancelled",
      threeds: "U:Challenge abandoned by the payer",
    },
  ])("$body → 303 to return_url with order_status $order_status", async ({ body, order_status, result, state, threeds }) => {
    const { page, transaction_id } = await challenged();
    const res = await request(app).post(page).type("form").send(body).expect(303);
    const params = returned(res.headers.location!);
    expect(params).toMatchObject({
      merchant_id: ACME.merchant_id,
      account_id: ACME.account_id,
      transaction_id,
      amount: "10.00",
      currency: "USD",
      order_status,
      result_info: result,
      card: "400000******3184",
    });
    const tx = deps.store.data.transactions.find((t) => t.transaction_id === transaction_id)!;
    expect(tx.state).toBe(state);
    expect(tx.threeds_result).toBe(threeds);
    expect(events(transaction_id)).toEqual(["payment.pending", `payment.${state}`]);
    expect(tx.history?.map((h) => h.source)).toEqual(["api", "payer"]);
  });

  test("a frictionless 3-D Secure payment answers at once: no challenge page", async () => {
    const res = await postAuthorise(app, directPayment({ open3d: "do3DS", return_url: RETURN })).expect(200);
    const xml = parseXml(res.text);
    expect(textOf(xml.order_status)).toBe("1");
    expect(textOf(xml.threeds_result)).toBe("Y:Authenticated (frictionless)");
    expect(xml.issuer_url).toBeUndefined();
  });

  test("the query operation shows the new truth", async () => {
    const { page, transaction_id } = await challenged();
    await request(app).post(page).type("form").send({ outcome: "threeds_passed" }).expect(303);
    const res = await request(app)
      .post("/v1/retrievalTrans")
      .type("form")
      .send({ merchant_id: ACME.merchant_id, account_id: ACME.account_id, transaction_id, encryption_data: ANY_SIGNATURE })
      .expect(200);
    expect(res.body.orders_list[0]).toMatchObject({ transaction_id, payment_status: "2000", is3ds: "1" });
  });

  test("a subscription sent with a challenged payment starts when the challenge passes, charged to the card on file", async () => {
    const { page, transaction_id } = await challenged({ subscription: { contract_name: "Box", interval: "month", interval_count: "1", billing_cycle: 3 } });
    expect(deps.store.data.subscriptions.filter((s) => s.transaction_id === transaction_id)).toHaveLength(0);
    await request(app).post(page).type("form").send({ outcome: "threeds_passed" }).expect(303);
    const subs = deps.store.data.subscriptions.filter((s) => s.transaction_id === transaction_id);
    expect(subs).toHaveLength(1);
    expect(deps.store.data.tokens.find((t) => t.token_id === subs[0]!.token_id)?.card_masked).toBe("400000******3184");
  });
});

describe("APM page", () => {
  test.each([
    { outcome: "paid", order_status: "1", payment_status: "3000", result: "0000:Success" },
    { outcome: "failed", order_status: "0", payment_status: "6000", result: "D0062:Refused by the payer's payment method" },
    { outcome: "cancelled", order_status: "0", payment_status: "5000", result: "C0001:Cancelled by the payer" },
    { outcome: "expired", order_status: "0", payment_status: "5000", result: "C0002:Payment expired before the payer paid" },
    { outcome: "pending", order_status: "-1", payment_status: "1000", result: "P0002:Pending: waiting for the payer at the payment page" },
  ])("outcome=$outcome → order_status $order_status, payment_status $payment_status", async ({ outcome, order_status, payment_status, result }) => {
    const { page, order_no } = await apm();
    const res = await request(app).post(page).type("form").send({ outcome }).expect(303);
    expect(returned(res.headers.location!)).toMatchObject({ order_no, order_status, result_info: result, card: "" });
    expect(txOf(order_no).state).toBe(
      Object.entries({ "3000": "paid", "6000": "declined", "5000": "cancelled", "1000": "pending" }).find(([k]) => k === payment_status)![1],
    );
  });

  test("Accept: application/json answers the result as JSON", async () => {
    const { page, order_no } = await apm();
    const res = await request(app).post(page).type("form").set("accept", "application/json").send({ outcome: "paid" }).expect(200);
    expect(res.body).toEqual({
      transaction_id: txOf(order_no).transaction_id,
      order_status: "1",
      result_info: "0000:Success",
      return_url: expect.stringContaining("https://shop.example.com/return?cart=7&"),
    });
    returned(res.body.return_url);
  });

  test("the page shows the method's name and amount; an unknown outcome is refused with the list", async () => {
    const { page } = await apm();
    expect((await request(app).get(page).expect(200)).text).toContain("<h1>Pix</h1>");
    const res = await request(app).post(page).type("form").send({ outcome: "threeds_passed" }).expect(400);
    expect(res.text).toContain("paid");
    const json = await request(app).post(page).type("form").set("accept", "application/json").send({ outcome: "__proto__" }).expect(400);
    expect(json.body).toMatchObject({ error: "invalid_outcome", allowed: ["paid", "failed", "cancelled", "expired", "pending"] });
  });
});

describe("a page used twice, and bad addresses", () => {
  test("a finished payment answers 409 and is not charged again; GET shows the final result", async () => {
    const { page, order_no } = await apm();
    await request(app).post(page).type("form").send({ outcome: "paid" }).expect(303);
    const before = structuredClone(txOf(order_no));
    const again = await request(app).post(page).type("form").send({ outcome: "failed" }).expect(409);
    expect(again.text).toContain("Payment approved");
    const json = await request(app).post(page).type("form").set("accept", "application/json").send({ outcome: "paid" }).expect(409);
    expect(json.body).toMatchObject({ error: "payment_not_pending", order_status: "1" });
    expect(txOf(order_no)).toEqual(before);
    expect(events(before.transaction_id)).toEqual(["payment.pending", "payment.paid"]);
    const shown = await request(app).get(page).expect(200);
    expect(shown.text).toContain('id="return-link"');
  });

  test("unknown pages are 404 in HTML or JSON; a malformed form is 400, not a crash", async () => {
    expect((await request(app).get("/pay/apm/ffffffffffffffffffffffff").expect(404)).text).toContain("No payment page");
    await request(app)
      .post("/pay/nope/abc")
      .set("accept", "application/json")
      .type("form")
      .send({ outcome: "paid" })
      .expect(404, /page_not_found/);
    const { page } = await apm();
    await request(app).post(page).set("content-type", "application/json").send("{bad").expect(400);
    await request(app)
      .post(page)
      .type("form")
      .send({})
      .expect(400, /nothing to do/);
  });
});

describe("hosted checkout", () => {
  test("theForm's landing shows merchant, order, amount and the decoded items", async () => {
    const { page, order_no } = await checkout({ items: "Tent#,#T-1#,#10.00#,#1#;#<b>Stove</b>#,#S-2#,#5.00#,#2" });
    const res = await request(app).post(page).type("form").send({ allParams: "x=1", orderNo: order_no }).expect(200);
    expect(res.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(res.text).toContain("<td>Tent</td><td>T-1</td>");
    expect(res.text).toContain("&lt;b&gt;Stove&lt;/b&gt;");
    expect(res.text).toContain("Acme Outdoor");
    expect(res.text).toContain("42.50 EUR");
  });

  const card = (number: string, more: Record<string, string> = {}) => ({
    card: number,
    expiration_month: "12",
    expiration_year: "2030",
    security_code: "123",
    holder_name: "Jane Doe",
    ...more,
  });

  test.each([
    { number: "4242424242424242", order_status: "1", payment_status: "2000" },
    { number: "4000000000000002", order_status: "0", payment_status: "6000" },
    { number: "4000000000009995", order_status: "0", payment_status: "6000" },
  ])("card $number decides as a direct payment would → order_status $order_status", async ({ number, order_status, payment_status }) => {
    const { page, order_no } = await checkout();
    const res = await request(app).post(page).type("form").send(card(number)).expect(303);
    expect(returned(res.headers.location!)).toMatchObject({ order_no, order_status, card: `${number.slice(0, 6)}******${number.slice(-4)}` });
    expect(txOf(order_no).state).toBe(payment_status === "2000" ? "authorised" : "declined");
  });

  test("a card that needs 3-D Secure leads to the challenge page, then to return_url", async () => {
    const { page, order_no } = await checkout();
    const res = await request(app).post(page).type("form").send(card("4000002760003184")).expect(303);
    expect(res.headers.location).toMatch(/\/pay\/3ds\/[0-9a-f]{24}$/);
    await request(app).get(page).expect(303);
    const done = await request(app).post(pathOf(res.headers.location!)).type("form").send({ challenge_code: "1234" }).expect(303);
    expect(returned(done.headers.location!)).toMatchObject({ order_no, order_status: "1" });
    expect(txOf(order_no).is3ds).toBe(true);
  });

  test("a bad card form is refused field by field and changes nothing", async () => {
    const { page, order_no } = await checkout();
    const res = await request(app)
      .post(page)
      .type("form")
      .send(card("4242424242424241", { expiration_month: "13", security_code: "" }))
      .expect(400);
    for (const field of ["card", "expiration_month", "security_code"]) expect(res.text).toContain(`<code>${field}</code>`);
    expect(txOf(order_no).state).toBe("pending");
    const json = await request(app).post(page).type("form").set("accept", "application/json").send(card("1")).expect(400);
    expect(json.body.problems[0]).toMatchObject({ field: "card" });
  });

  test("a scenario chosen by X-Sandbox-Scenario for the checkout also decides the payer's card", async () => {
    const body = {
      merchant_id: ACME.merchant_id,
      account_id: ACME.account_id,
      order_no: nextOrderNo("CO-H"),
      currency: "EUR",
      amount: "42.50",
      return_url: RETURN,
      encryption_data: ANY_SIGNATURE,
    };
    const res = await request(app).post("/v1/checkout").set("x-sandbox-scenario", "declines").send(body).expect(200);
    const page = pathOf(/action="([^"]+)"/.exec(res.text)![1]!);
    const done = await request(app).post(page).type("form").send(card("4242424242424242")).expect(303);
    expect(returned(done.headers.location!)).toMatchObject({ order_status: "0" });
    expect(txOf(body.order_no).history?.at(-1)?.rule).toMatch(/^declines\//);
  });

  test("an expired card declines as expired", async () => {
    const { page, order_no } = await checkout();
    await request(app)
      .post(page)
      .type("form")
      .send(card("4242424242424242", { expiration_year: "2020" }))
      .expect(303);
    expect(txOf(order_no).result).toBe("expired_card");
  });

  test("a card expires by the merchant's own clock: two years on for it, a card good for one more year by the sandbox's declines as expired", async () => {
    await request(app).put("/__sandbox/merchants/CLOCK-CARD").expect(200);
    await request(app).post("/__sandbox/clock").send({ advance: "730d", merchant_id: "CLOCK-CARD" }).expect(200);
    const nextYear = String(deps.clock.now().getUTCFullYear() + 1);
    const ahead = await checkout({ merchant_id: "CLOCK-CARD", account_id: "A1" });
    await request(app)
      .post(ahead.page)
      .type("form")
      .send(card("4242424242424242", { expiration_year: nextYear }))
      .expect(303);
    expect(txOf(ahead.order_no).result).toBe("expired_card");
    // as that merchant's direct payment with the card is
    const direct = await request(app)
      .post("/v1/authorise")
      .send(directPayment({ merchant_id: "CLOCK-CARD", account_id: "A1", expiration_year: nextYear }))
      .expect(200);
    expect(textOf(parseXml(direct.text).result_info)).toMatch(/^D0054:/);
    // another merchant's payer pays with it
    const now = await checkout();
    await request(app)
      .post(now.page)
      .type("form")
      .send(card("4242424242424242", { expiration_year: nextYear }))
      .expect(303);
    expect(txOf(now.order_no).state).toBe("authorised");
  });

  test.each([
    { outcome: "paid", state: "authorised" },
    { outcome: "stolen_card", state: "declined" },
    { outcome: "review", state: "review" },
    { outcome: "cancelled", state: "cancelled" },
    { outcome: "pending", state: "pending" },
  ])("the tester panel forces $outcome", async ({ outcome, state }) => {
    const { page, order_no } = await checkout();
    await request(app).post(page).type("form").send({ outcome }).expect(303);
    expect(txOf(order_no).state).toBe(state);
  });

  test("a subscription in the checkout request starts when the payer pays by card", async () => {
    const { page, order_no } = await checkout({
      subscription: JSON.stringify({ contract_name: "Gold", interval: "month", interval_count: "1", billing_cycle: 12 }),
    });
    await request(app).post(page).type("form").send(card("4242424242424242")).expect(303);
    const tx = txOf(order_no);
    const sub = deps.store.data.subscriptions.find((s) => s.transaction_id === tx.transaction_id);
    expect(sub).toMatchObject({ contract_name: "Gold", state: "active" });
    expect(tx.recurring_id).toBe(sub!.recurring_id);
    expect(deps.store.data.tokens.find((t) => t.token_id === sub!.token_id)?.card_masked).toBe("424242******4242");
  });

  test("a subscription of a payment held for review starts when the review approves it", async () => {
    const { page, order_no } = await checkout({
      currency: "USD",
      amount: "10.00",
      subscription: JSON.stringify({ contract_name: "Held", interval: "month", billing_cycle: 2 }),
    });
    await request(app).post(page).type("form").send({ outcome: "review" }).expect(303);
    const tx = txOf(order_no);
    expect(tx.state).toBe("review");
    expect(deps.store.data.subscriptions.some((s) => s.transaction_id === tx.transaction_id)).toBe(false);
    const order = { transaction_id: tx.transaction_id, order_no, currency: "USD", amount: "10.00", review_flag: "approve" };
    await request(app)
      .post("/v1/review")
      .send({ merchant_id: ACME.merchant_id, account_id: ACME.account_id, encryption_data: ANY_SIGNATURE, review_orders: [order] })
      .expect(200);
    expect(tx.state).toBe("authorised");
    expect(deps.store.data.subscriptions.find((s) => s.transaction_id === tx.transaction_id)).toMatchObject({ contract_name: "Held", state: "active" });
    expect(tx.payer_request).toBeUndefined();
  });

  test("without a return_url the payer sees a result page", async () => {
    const { page } = await checkout({ return_url: undefined });
    const res = await request(app).post(page).type("form").send({ outcome: "paid" }).expect(200);
    expect(res.text).toContain("Payment approved");
    expect(res.text).not.toContain('id="return-link"');
  });
});

describe("POST /__sandbox/payments/<transaction_id>/complete", () => {
  test("completes a pending payment like its page would; 409 once finished; 400 and 404 for bad calls", async () => {
    const { transaction_id } = await challenged();
    await request(app).post("/__sandbox/payments/0000/complete").send({ outcome: "paid" }).expect(404);
    const bad = await request(app).post(`/__sandbox/payments/${transaction_id}/complete`).send({ outcome: "expired" }).expect(400);
    expect(bad.body.message).toContain("threeds_passed");
    const ok = await request(app).post(`/__sandbox/payments/${transaction_id}/complete`).send({ outcome: "threeds_passed" }).expect(200);
    expect(ok.body).toMatchObject({ transaction_id, order_status: "1", payment_status: "2000", result_info: "0000:Success" });
    returned(ok.body.return_url);
    const again = await request(app).post(`/__sandbox/payments/${transaction_id}/complete`).send({ outcome: "threeds_failed" }).expect(409);
    expect(again.body).toMatchObject({ error: "payment_not_pending", payment_status: "2000" });
    expect(events(transaction_id)).toEqual(["payment.pending", "payment.authorised"]);
  });
});

describe("hostile values on the pages are escaped", () => {
  test("merchant order_no, items and return_url never come back as markup", async () => {
    const hostile = '"><img src=x onerror=alert(1)><script>alert(2)</script>';
    const { page } = await checkout({ order_no: `X${hostile}`.slice(0, 60), items: `${hostile}#,#c#,#1.00#,#1`, note: hostile });
    const shown = await request(app).post(page).type("form").send({ allParams: "" }).expect(200);
    expect(shown.text).not.toMatch(/<img src=x|<script>alert/);
    const done = await request(app).post(page).type("form").send({ outcome: "pending" }).expect(303);
    expect(done.headers.location).not.toContain("<");
  });

  test("an APM page and a result page show hostile request values as text", async () => {
    const hostile = "<script>alert(1)</script>";
    const { page } = await apm({ payment_method: hostile, order_no: `A${hostile}`, return_url: undefined });
    const shown = await request(app).get(page).expect(200);
    expect(shown.text).toContain("<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>");
    const result = await request(app).post(page).type("form").send({ outcome: "failed" }).expect(200);
    expect(result.text).toContain("A&lt;script&gt;");
    expect(result.text).not.toContain("<script>alert");
  });
});

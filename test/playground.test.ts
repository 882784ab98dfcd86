// The dashboard's QA playground over HTTP, as a browser posts its forms: a form makes a payment
// through the gateway's own request path (signed with the merchant's key, decided by the scenario
// or the named outcome, stored and logged as any merchant's), and answers 303 to its result page;
// bad input is a 400 page with the message and stores nothing; a post from another site, or
// without the dashboard's form token, is refused.
import request from "supertest";
import { beforeEach, describe, expect, test } from "vitest";
import type { App } from "../src/server/app.js";
import type { Deps } from "../src/deps/deps.js";
import { REPLICA_MODE } from "./replica-helpers.js";
import { scenarioDir } from "./scenario-helpers.js";
import { formSession, makeApp, snapshotState } from "./helpers.js";
import type { SandboxOptions } from "../src/server/sandbox.js";

const PLAYGROUND = "/__sandbox/ui/playground";

let app: App;
let deps: Deps;
let session: { cookie: string; token: string };

async function start(options: SandboxOptions = {}) {
  ({ app, deps } = await makeApp(options));
  session = await formSession(app, PLAYGROUND);
}

beforeEach(async () => start());

const CARD = {
  kind: "card",
  merchant_id: "M10001",
  account_id: "A10001",
  amount: "10.00",
  currency: "USD",
  card: "4242424242424242",
  expiration_month: "12",
  expiration_year: "2031",
  security_code: "123",
  outcome: "",
};
const CHECKOUT = { kind: "checkout", merchant_id: "M10001", account_id: "A10001", amount: "25.00", currency: "USD", outcome: "" };
const APM = { kind: "apm", merchant_id: "M10001", account_id: "A10002", amount: "25.00", currency: "BRL", payment_method: "pix", outcome: "" };

/** Posts a playground form as the tester's browser does: same origin, with the page's form token. */
const post = (fields: Record<string, string>) =>
  request(app)
    .post(PLAYGROUND)
    .set({ cookie: session.cookie, "sec-fetch-site": "same-origin", origin: "http://127.0.0.1" })
    .type("form")
    .send({ ...fields, _form: session.token });

/** Posts a form that must make a payment: its transaction (from the 303's address) and result page. */
async function pay(fields: Record<string, string>) {
  const res = await post(fields);
  expect(res.status, res.text.match(/id="playground-error"[^>]*>([^<]*)/)?.[1] ?? res.text.slice(0, 300)).toBe(303);
  const id = /\/ui\/playground\/result\/([^/?]+)$/.exec(res.headers.location as string)?.[1];
  expect(id, res.headers.location as string).toBeDefined();
  const tx = deps.store.records.transaction(decodeURIComponent(id!))!;
  expect(tx).toBeDefined();
  const page = await request(app)
    .get(res.headers.location as string)
    .set("cookie", session.cookie)
    .expect(200);
  return { tx, page: page.text };
}

describe.skipIf(REPLICA_MODE)("the playground makes payments through the gateway", () => {
  test("the page: a Playground tab, three forms, each with the form token and the merchants' accounts", async () => {
    const res = await request(app).get(PLAYGROUND).set("cookie", session.cookie).expect(200);
    expect(res.headers["content-security-policy"]).toContain("form-action 'self'");
    expect(res.text).toMatch(/<a href="\/__sandbox\/ui\/playground" class="current" data-tab="playground">Playground<\/a>/);
    const forms = res.text.match(/<form method="post" action="\/__sandbox\/ui\/playground" data-playground>/g) ?? [];
    expect(forms).toHaveLength(3);
    expect(res.text.split(`name="_form" value="${session.token}"`).length - 1).toBe(3);
    for (const kind of ["card", "checkout", "apm"]) expect(res.text).toContain(`name="kind" value="${kind}"`);
    expect(res.text).toContain('<option value="A10002"');
    // the test cards of the scenario in force, and the outcomes X-Sandbox-Outcome takes
    expect(res.text).toContain('<option value="4000000000000002">do_not_honor (default/decline-generic)</option>');
    expect(res.text).toContain('<option value="insufficient_funds">insufficient_funds</option>');
  });

  test("a card the scenario declines: declined with its reason, decided by its rule, signed with the merchant's key", async () => {
    const { tx, page } = await pay({ ...CARD, card: "4000000000000002" });
    expect(tx).toMatchObject({
      merchant_id: "M10001",
      account_id: "A10001",
      kind: "direct",
      state: "declined",
      result: "do_not_honor",
      amount: "10.00",
      currency: "USD",
      card_masked: "400000******0002",
    });
    expect(tx.history?.[0]?.rule).toBe("default/decline-generic");
    // a real gateway request: in the request log with its signature matched
    const [logged] = deps.requests.list({ merchant_id: "M10001", order_no: tx.order_no, limit: 5 });
    expect(logged).toMatchObject({
      operation: "authorise",
      path: "/v1/authorise",
      http_status: 200,
      result: "D0005:Do not honor",
      rule: "default/decline-generic",
    });
    expect(logged!.signature).toMatchObject({ matched: true });
    expect(deps.requests.exchange(logged!.id)?.requestHeaders).toContainEqual(["user-agent", "Sandgate dashboard playground"]);
    // the result page: the outcome and the link to the transaction's page
    expect(page).toContain('<h1 id="outcome">Declined</h1>');
    expect(page).toContain("D0005:Do not honor");
    expect(page).toContain(`<a id="transaction-link" class="mono" href="/__sandbox/ui/transactions/${tx.transaction_id}">`);
    expect(page).toContain("&lt;order_status&gt;0&lt;/order_status&gt;"); // the gateway's answer, escaped
    await request(app).get(`/__sandbox/ui/transactions/${tx.transaction_id}`).expect(200);
  });

  test("a card the scenario approves: authorised on the manual-capture account", async () => {
    const { tx, page } = await pay(CARD);
    expect(tx).toMatchObject({ state: "authorised", result: "success" });
    expect(page).toContain('<h1 id="outcome">Approved (authorised)</h1>');
  });

  test("the card form's expiry is good for three years by the clock of the merchant it pays for, moved on four years", async () => {
    await request(app).post("/__sandbox/clock").send({ advance: "1461d", merchant_id: "M10001" }).expect(200);
    const res = await request(app).get(PLAYGROUND).set("cookie", session.cookie).expect(200);
    const year = /name="expiration_year"[^>]*value="(\d{4})"/.exec(res.text)?.[1];
    expect(year).toBe(String(deps.store.records.nowOf("M10001", deps.clock.now()).getUTCFullYear() + 3));
    const { tx } = await pay({ ...CARD, expiration_year: year! });
    expect(tx.state).toBe("authorised");
  });

  test("a named outcome instead of a card: X-Sandbox-Outcome decides (and a card is made up)", async () => {
    const { tx, page } = await pay({ ...CARD, card: "", outcome: "insufficient_funds" });
    expect(tx).toMatchObject({ state: "declined", result: "insufficient_funds", card_masked: "424242******4242" });
    expect(tx.history?.[0]?.rule).toBe("header/X-Sandbox-Outcome: insufficient_funds");
    expect(page).toContain("header/X-Sandbox-Outcome: insufficient_funds");
    // the named outcome wins over the card too
    expect((await pay({ ...CARD, outcome: "stolen_card" })).tx.result).toBe("stolen_card");
  });

  test("in strict signature mode too: the playground signs as a correct integration does", async () => {
    await start({ signatureMode: "strict" });
    expect((await pay(CARD)).tx.state).toBe("authorised");
    const [logged] = deps.requests.list({ merchant_id: "M10001", limit: 1 });
    expect(logged!.signature).toMatchObject({ mode: "strict", matched: true });
  });

  test("a hosted checkout waits for its payer: the result page opens the checkout page, and the payer comes back to the playground", async () => {
    const { tx, page } = await pay(CHECKOUT);
    expect(tx).toMatchObject({ kind: "checkout", state: "pending", amount: "25.00" });
    expect(tx.return_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/__sandbox\/ui\/playground\/returned$/);
    expect(page).toContain('<h1 id="outcome">Waiting for the payer</h1>');
    expect(page).toContain(`<a class="button" id="open-payer-page" href="/pay/checkout/${tx.page_id}">`);
    await request(app).get(`/pay/checkout/${tx.page_id}`).expect(200);
    // the payer pays at the checkout and is sent to the playground's return_url, whose signed result holds
    const paid = await request(app)
      .post(`/pay/checkout/${tx.page_id}`)
      .type("form")
      .send({ card: "4242424242424242", expiration_month: "12", expiration_year: "2031", security_code: "123", holder_name: "Q A" })
      .expect(303);
    const back = new URL(paid.headers.location as string);
    expect(back.pathname).toBe(`${PLAYGROUND}/returned`);
    const returned = await request(app).get(`${back.pathname}${back.search}`).set("cookie", session.cookie).expect(200);
    expect(returned.text).toContain('<h1 id="outcome">Approved (authorised)</h1>');
    expect(returned.text).toContain("the return&#39;s signature is valid");
    // a forged return is told apart
    back.searchParams.set("order_status", "0");
    const forged = await request(app).get(`${back.pathname}${back.search}`).expect(200);
    expect(forged.text).toContain("the return&#39;s signature is NOT valid");
  });

  test("a named outcome at the checkout ends the payment whatever card the payer enters", async () => {
    const { tx } = await pay({ ...CHECKOUT, outcome: "do_not_honor" });
    await request(app)
      .post(`/pay/checkout/${tx.page_id}`)
      .type("form")
      .send({ card: "4242424242424242", expiration_month: "12", expiration_year: "2031", security_code: "123" })
      .expect(303);
    expect(deps.store.records.transaction(tx.transaction_id)).toMatchObject({ state: "declined", result: "do_not_honor" });
  });

  test("an APM payment waits at its APM page; a named outcome decides it at once", async () => {
    const { tx, page } = await pay(APM);
    expect(tx).toMatchObject({ kind: "apm", state: "pending", payment_method: "pix", currency: "BRL" });
    expect(page).toContain(`<a class="button" id="open-payer-page" href="/pay/apm/${tx.page_id}">`);
    await request(app).get(`/pay/apm/${tx.page_id}`).expect(200);
    expect((await pay({ ...APM, outcome: "approved" })).tx.state).toBe("paid");
  });
});

describe.skipIf(REPLICA_MODE)("bad input: a 400 page with the message, nothing stored", () => {
  const CASES: [string, Record<string, string>, string][] = [
    ["missing amount", { ...CARD, amount: "" }, "amount is required"],
    ["bad currency", { ...CARD, currency: "DOLLARS" }, "currency must be a three-letter currency code"],
    ["bad currency at the checkout", { ...CHECKOUT, currency: "us" }, "currency must be a three-letter currency code"],
    ["unknown merchant", { ...CARD, merchant_id: "M99999" }, "Unknown merchant &quot;M99999&quot;"],
    ["an account of another merchant", { ...CARD, account_id: "A20001" }, "Merchant M10001 has no account &quot;A20001&quot;"],
    ["a card that fails the Luhn check", { ...CARD, card: "4242424242424241" }, "card fails the Luhn check"],
    ["an outcome the operation does not have", { ...APM, outcome: "threeds_required" }, "&quot;threeds_required&quot; is not an outcome of apm"],
    ["an APM payment without a method", { ...APM, payment_method: "" }, "Give a payment method"],
    ["an unknown kind", { ...CARD, kind: "refund" }, "Unknown kind of payment"],
  ];

  test.each(CASES)("%s", async (_name, fields, message) => {
    const before = snapshotState(deps);
    const res = await post(fields);
    expect(res.status).toBe(400);
    expect(res.type).toBe("text/html");
    const shown = /<div class="flash bad" id="playground-error" role="alert">([^<]*)<\/div>/.exec(res.text)?.[1];
    expect(shown).toContain(message);
    // the form keeps what was sent, and still carries the token
    expect(res.text).toContain(`value="${fields.amount}"`);
    expect(res.text).toContain(`name="_form" value="${session.token}"`);
    expect(snapshotState(deps)).toEqual(before);
  });

  test("a hostile value is shown escaped, and no merchant is provisioned for it", async () => {
    const before = snapshotState(deps);
    const res = await post({ ...CARD, merchant_id: '<img src=x onerror="alert(1)">' });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain("<img src=x");
    expect(res.text).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(snapshotState(deps)).toEqual(before);
  });

  test("a scenario fault: 502 with the rule, nothing stored", async () => {
    const failing = {
      name: "gateway-down",
      description: "every payment answers 503",
      rules: [{ id: "down", when: { operation: ["authorise", "checkout", "apm"] }, then: { status: 503 } }],
    };
    await start({ scenarios: scenarioDir({ "gateway-down.json": failing }), scenario: "gateway-down" });
    const before = snapshotState(deps);
    const res = await post(CARD);
    expect(res.status).toBe(502);
    expect(res.text).toContain("The gateway did not make the payment (HTTP 503)");
    expect(res.text).toContain("scenario rule gateway-down/down");
    expect(snapshotState(deps)).toEqual(before);
  });

  test("a scenario that resets the connection: 502, said so", async () => {
    const reset = {
      name: "resets",
      description: "every payment's connection is reset",
      rules: [{ id: "reset", when: { operation: "authorise" }, then: { fault: "reset" } }],
    };
    await start({ scenarios: scenarioDir({ "resets.json": reset }), scenario: "resets" });
    const res = await post(CARD);
    expect(res.status).toBe(502);
    expect(res.text).toContain("The gateway closed the connection without an answer (scenario rule resets/reset)");
    expect(deps.store.data.transactions.filter((t) => t.merchant_id === "M10001" && t.order_no.startsWith("QA-"))).toEqual([]);
  });
});

describe.skipIf(REPLICA_MODE)("who may post", () => {
  test.each([
    ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site", origin: "https://evil.example" }],
    ["an Origin of another site", { origin: "http://evil.example" }],
  ])("from another site (%s): 403, no payment, even with a valid form token", async (_name, headers) => {
    const before = snapshotState(deps);
    const res = await request(app)
      .post(PLAYGROUND)
      .set({ ...headers, cookie: session.cookie })
      .type("form")
      .send({ ...CARD, _form: session.token });
    expect(res.status).toBe(403);
    expect(res.text).toContain("Refused: another site");
    expect(snapshotState(deps)).toEqual(before);
    expect(deps.requests.list({ merchant_id: "M10001", limit: 1 })).toEqual([]);
  });

  test("without the form token, or with another browser's: 403, no payment", async () => {
    const other = await formSession(app, PLAYGROUND);
    const before = snapshotState(deps);
    for (const token of [undefined, other.token]) {
      const res = await request(app)
        .post(PLAYGROUND)
        .set("cookie", session.cookie)
        .type("form")
        .send({ ...CARD, ...(token ? { _form: token } : {}) });
      expect(res.status).toBe(403);
      expect(res.text).toContain("form token");
    }
    expect(snapshotState(deps)).toEqual(before);
  });
});

// POST /v1/checkout (seed operation 3): the auto-submitting loading page, its hidden inputs, the
// pending transaction it creates, refusals, and the hosted checkout its form lands on.
import qs from "qs";
import request from "supertest";
import { describe, expect, test } from "vitest";
import { CHECKOUT_INPUTS_ID } from "../src/render/checkout-page.js";
import { ACME, apmPayment, fullPaymentRequest, makeApp, nextOrderNo } from "./helpers.js";

const CARD_FIELDS = ["card", "expiration_month", "expiration_year", "security_code", "secure_payment", "accept"];

/** Every field of the interface document's payment request except the direct-payment-only ones. */
function checkoutRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const full = fullPaymentRequest({ order_no: nextOrderNo("CHK") });
  return { ...Object.fromEntries(Object.entries(full).filter(([name]) => !CARD_FIELDS.includes(name))), ...overrides };
}

/** How a request value travels in a hidden input: text, objects as JSON. */
const asInput = (value: unknown) => (typeof value === "object" && value !== null ? JSON.stringify(value) : String(value));

interface CheckoutPage {
  title: string | undefined;
  form: Record<string, string | undefined>;
  pairs: [string, string][];
  inputs: Map<string, string>;
}

function readCheckoutPage(html: string): CheckoutPage {
  const formTag = /<form\b[^>]*>/.exec(html)?.[0] ?? "";
  const attr = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(formTag)?.[1];
  const data = new RegExp(`<script type="application/json" id="${CHECKOUT_INPUTS_ID}">([^<]*)</script>`).exec(html)?.[1];
  if (data === undefined) throw new Error("the page has no input data block");
  const pairs = JSON.parse(data) as [string, string][];
  return {
    title: /<title>([^<]*)<\/title>/.exec(html)?.[1],
    form: { name: attr("name"), id: attr("id"), method: attr("method"), action: attr("action") },
    pairs,
    inputs: new Map(pairs),
  };
}

async function postCheckout(body: Record<string, unknown> = checkoutRequest()) {
  const { app, deps } = await makeApp();
  const res = await request(app).post("/v1/checkout").send(body);
  return { app, deps, res, body };
}

async function openCheckout(body?: Record<string, unknown>) {
  const posted = await postCheckout(body);
  expect(posted.res.status, posted.res.text).toBe(200);
  return { ...posted, page: readCheckoutPage(posted.res.text) };
}

describe("POST /v1/checkout: the loading page", () => {
  test("is HTML titled as a loading page with theForm posting to the hosted checkout", async () => {
    const { res, page, deps, body } = await openCheckout();
    expect(res.type).toBe("text/html");
    expect(page.title).toBe("Loading...");
    expect(page.form.name).toBe("theForm");
    expect(page.form.id).toBe("theForm");
    expect(page.form.method).toBe("POST");
    const tx = deps.store.data.transactions.find((t) => t.order_no === body.order_no);
    expect(page.form.action).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/pay\/checkout\/[0-9a-f]{24}$/);
    expect(page.form.action?.endsWith(`/pay/checkout/${tx?.page_id}`)).toBe(true);
  });

  test("has the interface document's structure: form, input data, then a script that builds inputs with the DOM and submits", async () => {
    const { res } = await openCheckout();
    expect(res.text).toMatch(
      /<title>Loading\.\.\.<\/title>[\s\S]*<form name="theForm"[^>]*><\/form>[\s\S]*<script type="application\/json"[^>]*>[^<]*<\/script>\s*<script>[\s\S]*<\/script>/,
    );
    const script = /<script>([\s\S]*?)<\/script>/.exec(res.text)?.[1] ?? "";
    expect(script).toContain('addEventListener("load"');
    expect(script).toContain('createElement("input")');
    expect(script).toMatch(/\.name = /);
    expect(script).toMatch(/\.value = /);
    expect(script).toContain("submit");
    expect(script).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });

  const fixed: [string, string][] = [
    ["gbc_id", "GW-880101"],
    ["connector_code", "NSA01"],
    ["account_name", "Acme Outdoor Cards"],
    ["website", "shop.example.com"],
    ["pm_id", "card"],
    ["apm_type", ""],
    ["descriptor", "ACME*OUTDOOR"],
    ["orderprefix", ""],
    ["rrtimezone", "0"],
    ["ordernumlength", "64"],
    ["sendbgoods", "1"],
    ["replacename", "0"],
    ["send_bank_website", "1"],
    ["replace_up_id", "0"],
    ["replace_match_address", "0"],
    ["to_pass_page", "0"],
  ];
  test.each(fixed)("fixed input %s is %j", async (name, value) => {
    const { page } = await openCheckout();
    expect(page.inputs.get(name)).toBe(value);
  });

  test("website is the interface document's `the service` or website, whichever is sent", async () => {
    const { page } = await openCheckout(checkoutRequest({ "the service": undefined, website: "https://acme.example" }));
    expect(page.inputs.get("website")).toBe("https://acme.example");
  });

  // alias → the request field it mirrors, or a literal value in brackets
  const aliases: [string, string][] = [
    ["signInfo", "encryption_data"],
    ["APMType", "[]"],
    ["taxTotal", "tax_total"],
    ["merNo", "merchant_id"],
    ["source_request_ip", "shopper_ip"],
    ["default_lang", "browser_lang"],
    ["defaultLang", "browser_lang"],
    ["orderNo", "order_no"],
    ["orderCurrency", "currency"],
    ["orderAmount", "amount"],
    ["itemTotal", "item_total"],
    ["shipFee", "shipping"],
    ["shippingDiscount", "shipping_discount"],
    ["goodsInfo", "items"],
    ["remark", "note"],
    ["firstName", "first_name"],
    ["lastName", "last_name"],
    ["email", "shopper_email"],
    ["phone", "shopper_phone"],
    ["country", "billing_country"],
    ["state", "billing_state"],
    ["city", "billing_city"],
    ["zip", "billing_postal_code"],
    ["address", "billing_address"],
    ["shipFirstName", "delivery_firstname"],
    ["shipLastName", "delivery_lastname"],
    ["shipCountry", "delivery_country"],
    ["shipState", "delivery_state"],
    ["shipCity", "delivery_city"],
    ["shipZip", "delivery_postal_code"],
    ["shipAddress", "delivery_address"],
    ["shopperId", "shopper_id"],
    ["shopperLevel", "shopper_level"],
    ["token", "token_id"],
    ["cardType", "[]"],
    ["card_type", "[]"],
    ["paymentToken", "token_id"],
    ["notifyUrl", "notify_url"],
    ["source_notify_url", "notify_url"],
    ["return_url", "return_url"],
    ["returnUrl", "return_url"],
    ["cancel_url", "return_url"],
    ["cancelUrl", "return_url"],
    ["verifyBillingAddress", "[]"],
    ["verify_billing_address", "[]"],
    ["merSendLogoNo", "[]"],
    ["logo_name", "[Acme Outdoor Cards]"],
    ["gatewayNo", "[GW-880101]"],
    ["isOpen3D", "open3d"],
    ["payment_method", "[card]"],
  ];
  test.each(aliases)("alias %s carries %s", async (alias, source) => {
    const body = checkoutRequest({ return_url: "https://shop.example.com/back", token_id: "tok_acme_visa_4242" });
    const { page } = await openCheckout(body);
    const literal = /^\[(.*)\]$/.exec(source)?.[1];
    const expected = literal ?? asInput(body[source]);
    if (literal === undefined) expect(expected, `the request sets ${source}`).not.toBe("");
    expect(page.inputs.get(alias)).toBe(expected);
  });

  test("every request field travels under its own name, objects and arrays as JSON", async () => {
    const { page, body } = await openCheckout();
    for (const [name, value] of Object.entries(body)) {
      if (name === "account_id" || value === undefined) continue;
      expect(page.inputs.get(name), name).toBe(asInput(value));
    }
    expect(JSON.parse(page.inputs.get("cart_items") ?? "")).toEqual(body.cart_items);
    expect(JSON.parse(page.inputs.get("subscription") ?? "")).toEqual(body.subscription);
  });

  test("account_id is the account's gateway account, not the merchant's account id", async () => {
    const { page } = await openCheckout();
    expect(page.inputs.get("account_id")).toBe("GW-880101");
    const other = await openCheckout(checkoutRequest({ account_id: "A10002" }));
    expect(other.page.inputs.get("account_id")).toBe("GW-880102");
    expect(other.page.inputs.get("connector_code")).toBe("MRD02");
  });

  test.each([
    ["the request's value", "32", "32"],
    ["24 when none is sent", undefined, "24"],
    ["24 when it is empty", "", "24"],
  ])("color_depth is numeric: %s", async (_case, sent, shown) => {
    const { page } = await openCheckout(checkoutRequest({ color_depth: sent }));
    expect(page.inputs.get("color_depth")).toBe(shown);
  });

  test("allParams is one query string of every other input, decodable back to the request", async () => {
    const { page, body } = await openCheckout();
    expect(page.pairs.at(-1)?.[0]).toBe("allParams");
    const all = new URLSearchParams(page.inputs.get("allParams"));
    const others = page.pairs.filter(([name]) => name !== "allParams");
    expect([...all]).toEqual(others);
    for (const [name, value] of Object.entries(body)) {
      if (name === "account_id" || value === undefined) continue;
      expect(all.get(name), name).toBe(asInput(value));
    }
    expect(JSON.parse(all.get("account_owner") ?? "")).toEqual(body.account_owner);
  });

  test("each name appears once, even when the merchant sends gateway-owned or alias names", async () => {
    const { page } = await openCheckout(checkoutRequest({ connector_code: "MINE", orderNo: "mine", allParams: "x=1" }));
    expect(page.pairs.length).toBe(page.inputs.size);
    expect(page.inputs.get("connector_code")).toBe("NSA01");
    expect(page.inputs.get("orderNo")).toBe("mine");
    expect(page.inputs.get("allParams")).not.toBe("x=1");
  });
});

describe("POST /v1/checkout: escaping", () => {
  const payloads = ["</script><script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "<!--<script>", "a\u2028b & 'c'"];
  const fields = ["note", "first_name", "custom"];
  const cases = fields.flatMap((field) => payloads.map((payload) => [field, payload] as const));

  test.each(cases)("%s = %j is data, never markup", async (field, payload) => {
    const { res, page } = await openCheckout(checkoutRequest({ [field]: payload }));
    expect(res.text).not.toContain("</script><script>");
    expect(res.text).not.toContain("<img");
    expect(res.text).not.toContain("<!--");
    expect(res.text).not.toContain("\u2028");
    expect(page.inputs.get(field)).toBe(payload);
    expect(new URLSearchParams(page.inputs.get("allParams")).get(field)).toBe(payload);
  });

  test("a field name is data too", async () => {
    const name = '"><img src=x onerror=alert(1)>';
    const { res, page } = await openCheckout(checkoutRequest({ [name]: "</script><script>alert(1)</script>" }));
    expect(res.text).not.toContain("<img");
    expect(res.text).not.toContain("</script><script>");
    expect(page.inputs.get(name)).toBe("</script><script>alert(1)</script>");
  });
});

describe("POST /v1/checkout: the pending transaction", () => {
  test("is stored with the page id, pending at the hosted checkout", async () => {
    const { deps, body, page } = await openCheckout(checkoutRequest({ amount: "25", currency: "usd" }));
    const matches = deps.store.data.transactions.filter((t) => t.order_no === body.order_no);
    expect(matches).toHaveLength(1);
    const tx = matches[0]!;
    expect(tx).toMatchObject({
      merchant_id: ACME.merchant_id,
      account_id: ACME.account_id,
      kind: "checkout",
      state: "pending",
      result: "pending_checkout",
      amount: "25.00",
      currency: "USD",
      card_masked: "",
      website: "shop.example.com",
      note: body.note,
      notify_url: body.notify_url,
    });
    expect(tx.transaction_id).toMatch(/^\d{16}$/);
    expect(page.form.action).toContain(`/pay/checkout/${tx.page_id}`);
  });

  test("is logged with the pending result", async () => {
    const { deps, body } = await openCheckout();
    const [entry] = deps.requests.list({ order_no: String(body.order_no) });
    expect(entry).toMatchObject({
      operation: "checkout",
      http_status: 200,
      result: "P0003:Pending: waiting for the payer at the hosted checkout",
      rule: "builtin/checkout-pending",
    });
  });
});

describe("POST /v1/checkout: refusals", () => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ["missing amount", { amount: undefined }, ["amount"]],
    ["a bad currency", { currency: "US" }, ["currency"]],
    ["a card number", { card: "4242424242424242" }, ["card"]],
    ["secure_payment", { secure_payment: "1" }, ["secure_payment"]],
    ["accept", { accept: "1" }, ["accept"]],
    ["a security code", { security_code: "123" }, ["security_code"]],
    ["a card and a missing order_no at once", { card: "4242424242424242", order_no: undefined }, ["card", "order_no"]],
    ["a bad return_url", { return_url: "javascript:alert(1)" }, ["return_url"]],
    ["missing merchant_id", { merchant_id: undefined }, ["merchant_id"]],
  ];
  test.each(cases)("%s: 400 HTML naming the field, nothing stored", async (_case, overrides, named) => {
    const { deps, res } = await postCheckout(checkoutRequest(overrides));
    expect(res.status).toBe(400);
    expect(res.type).toBe("text/html");
    expect(res.text).toContain("<title>Payment request refused</title>");
    for (const field of named) expect(res.text).toContain(`<code>${field}</code>`);
    expect(deps.store.data.transactions.filter((t) => t.kind === "checkout")).toHaveLength(0);
  });

  test("a malformed signature is refused as HTML", async () => {
    const { res } = await postCheckout(checkoutRequest({ encryption_data: "nope" }));
    expect(res.status).toBe(400);
    expect(res.text).toContain("I0013:Invalid encryption_data");
  });
});

describe("POST /v1/checkout: body formats", () => {
  const body = () => checkoutRequest({ cart_items: [{ basic_item_data: { name: "Tent", quantity: "1" } }] });
  const senders: [string, (r: request.Test, b: Record<string, unknown>) => request.Test][] = [
    ["JSON", (r, b) => r.send(b)],
    ["a form with bracket nesting", (r, b) => r.type("form").send(qs.stringify(b))],
    ["JSON sent as a form", (r, b) => r.type("form").send(JSON.stringify(b))],
  ];
  test.each(senders)("%s", async (_case, send) => {
    const { app, deps } = await makeApp();
    const sent = body();
    const res = await send(request(app).post("/v1/checkout"), sent);
    expect(res.status, res.text).toBe(200);
    const page = readCheckoutPage(res.text);
    expect(page.inputs.get("orderNo")).toBe(sent.order_no);
    expect(page.inputs.get("amount")).toBe("25.00");
    expect(JSON.parse(page.inputs.get("cart_items") ?? "")).toEqual(sent.cart_items);
    expect(deps.store.data.transactions.some((t) => t.order_no === sent.order_no && t.kind === "checkout")).toBe(true);
  });
});

describe("/pay/checkout/:pageId: the hosted checkout", () => {
  const path = (action: string | undefined) => new URL(action ?? "").pathname;

  test("theForm's submission shows the payment and the card form", async () => {
    const { app, page, body } = await openCheckout();
    const res = await request(app).post(path(page.form.action)).type("form").send(new URLSearchParams(page.pairs).toString());
    expect(res.status).toBe(200);
    expect(res.type).toBe("text/html");
    const field = (name: string) => new RegExp(`<dd data-field="${name}">([^<]*)</dd>`).exec(res.text)?.[1];
    expect(field("merchant")).toBe(`Acme Outdoor Ltd (${ACME.merchant_id})`);
    expect(field("order_no")).toBe(body.order_no);
    expect(field("amount")).toBe("25.00 USD");
    expect(res.text).toContain('<form method="post" action="');
    expect(res.text).toContain('id="card-form"');
  });

  test("GET shows the same payment", async () => {
    const { app, page, body } = await openCheckout();
    const res = await request(app).get(path(page.form.action));
    expect(res.status).toBe(200);
    expect(res.text).toContain(`<dd data-field="order_no">${body.order_no}</dd>`);
  });

  test("escapes what it shows", async () => {
    const { app, page } = await openCheckout(checkoutRequest({ order_no: '"><img src=x onerror=alert(1)>' }));
    const res = await request(app).post(path(page.form.action)).type("form").send("allParams=");
    expect(res.status).toBe(200);
    expect(res.text).not.toContain("<img");
    expect(res.text).toContain("&quot;&gt;&lt;img");
  });

  test.each([
    ["an unknown page", "/pay/checkout/0123456789abcdef01234567"],
    ["a page id with markup", "/pay/checkout/%3Cimg%20src%3Dx%3E"],
  ])("%s is a 404 HTML page", async (_case, url) => {
    const { app } = await makeApp();
    const res = await request(app).post(url).type("form").send("a=1");
    expect(res.status).toBe(404);
    expect(res.type).toBe("text/html");
    expect(res.text).toContain("Payment page not found");
    expect(res.text).not.toContain("<img");
  });

  test("an APM payment's page is not a hosted checkout: its checkout address leads to the APM page", async () => {
    const { app, deps } = await makeApp();
    const apm = apmPayment();
    expect((await request(app).post("/v1/authorise").send(apm)).status).toBe(200);
    const tx = deps.store.data.transactions.find((t) => t.order_no === apm.order_no);
    expect(tx?.page_id).toMatch(/^[0-9a-f]{24}$/);
    const moved = await request(app).get(`/pay/checkout/${tx?.page_id}`);
    expect(moved.status).toBe(303);
    expect(moved.headers.location).toMatch(new RegExp(`/pay/apm/${tx?.page_id}$`));
    expect((await request(app).post(`/pay/checkout/${tx?.page_id}`).type("form").send("card=4242424242424242")).status).toBe(400);
    expect((await request(app).get(`/pay/apm/${tx?.page_id}`)).status).toBe(200);
  });

  test("a body over 1mb is refused with an HTML page", async () => {
    const { app, page } = await openCheckout();
    const res = await request(app)
      .post(path(page.form.action))
      .type("form")
      .send(`note=${"x".repeat(1_100_000)}`);
    expect(res.status).toBe(413);
    expect(res.type).toBe("text/html");
  });
});

// Every way /v1/authorise refuses a request: 400 XML, order_status 0, result_info naming the
// field, <errors> listing it, and no change to state.
import { describe, expect, test } from "vitest";
import { apmPayment, errorFields, fullApmRequest, fullPaymentRequest, makeApp, parseXml, postAuthorise, snapshotState, textOf } from "./helpers.js";

type Body = Record<string, unknown>;
type Change = (body: Body) => Body;

const without =
  (...fields: string[]): Change =>
  (body) => {
    const copy = { ...body };
    for (const f of fields) delete copy[f];
    return copy;
  };
const withFields =
  (overrides: Body): Change =>
  (body) => ({ ...body, ...overrides });
/** Changes one nested value of a copy of the body, e.g. at(["cart_items", 0, "basic_item_data", "price", "amount_usd"], "x"). */
const at =
  (path: (string | number)[], value: unknown): Change =>
  (body) => {
    const copy = structuredClone(body);
    let node = copy as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
    node[path[path.length - 1]!] = value;
    return copy;
  };

interface Refusal {
  name: string;
  change: Change;
  /** the field every refusal must name; the <errors> list is exactly [field] */
  field: string;
  code: string;
}

const missing = (field: string, code = "I0001"): Refusal => ({ name: `${field} missing`, change: without(field), field, code });
const emptied = (field: string): Refusal => ({ name: `${field} empty`, change: withFields({ [field]: "" }), field, code: "I0001" });
const invalid = (field: string, value: unknown): Refusal => ({
  name: `${field} ${JSON.stringify(value)}`,
  change: withFields({ [field]: value }),
  field,
  code: "I0002",
});
const invalidAt = (path: (string | number)[], value: unknown, field: string): Refusal => ({
  name: `${field} ${JSON.stringify(value)}`,
  change: at(path, value),
  field,
  code: "I0002",
});

const DIRECT_REFUSALS: Refusal[] = [
  // required fields
  ...["merchant_id", "account_id", "order_no", "currency", "amount", "card", "expiration_month", "expiration_year", "security_code"].map((f) => missing(f)),
  ...["merchant_id", "account_id", "order_no", "currency", "amount", "card", "expiration_month", "expiration_year", "security_code"].map(emptied),
  missing("encryption_data", "I0013"),
  // request-level types
  invalid("merchant_id", { id: "M10001" }),
  invalid("account_id", ["A10001"]),
  // amounts
  ...["abc", "0", "0.00", "1.234", "-5.00", "10,00", "1e3"].map((v) => invalid("amount", v)),
  ...["item_total", "shipping", "handling", "tax_total", "insurance", "shipping_discount", "discount"].map((f) => invalid(f, "ten")),
  // codes and formats
  ...["US", "DOLLAR", "U$D"].map((v) => invalid("currency", v)),
  invalid("order_no", "x".repeat(65)),
  ...["4242abcd42424242", "4242", "4242424242424241", "42424242424242424242"].map((v) => invalid("card", v)),
  ...["13", "00", "ab"].map((v) => invalid("expiration_month", v)),
  ...["203", "year"].map((v) => invalid("expiration_year", v)),
  ...["12", "12345", "abc"].map((v) => invalid("security_code", v)),
  invalid("shopper_email", "jane.example.com"),
  invalid("birth_date", "1990-02-01"),
  invalid("billing_country", "USA"),
  invalid("delivery_country", "U1"),
  invalid("time_zone", "UTC"),
  invalid("color_depth", "deep"),
  invalid("challenge_window_size", "5"),
  invalid("items", "Tent#,#T-1#,#10.00"),
  invalid("items", "Tent#,#T-1#,#ten#,#1"),
  invalid("items", "Tent#,#T-1#,#10.00#,#one"),
  invalid("notify_url", "not a url"),
  invalid("notify_url", "ftp://shop.example.com/notify"),
  invalid("return_url", "/relative/return"),
  invalid("checkout_time", "abc"),
  invalid("checkout_time", 1.5),
  invalid("note", { text: "hi" }),
  invalid("first_name", ["Jane"]),
  // nested objects and arrays
  invalidAt(["cart_items", 0, "basic_item_data", "price", "amount_usd"], "x", "cart_items[0].basic_item_data.price.amount_usd"),
  invalidAt(["cart_items", 0, "basic_item_data", "price", "amount_local_currency"], "x", "cart_items[0].basic_item_data.price.amount_local_currency"),
  invalidAt(["cart_items", 0, "basic_item_data", "price", "currency"], "dollars", "cart_items[0].basic_item_data.price.currency"),
  invalidAt(["cart_items", 0, "basic_item_data", "name"], { n: 1 }, "cart_items[0].basic_item_data.name"),
  invalidAt(["cart_items", 0], 5, "cart_items[0]"),
  invalidAt(["account_owner", 0, "created"], "x", "account_owner[0].created"),
  invalidAt(["account_owner", 0, "past_orders_count"], "many", "account_owner[0].past_orders_count"),
  invalidAt(["account_owner", 0, "past_orders_sum"], "lots", "account_owner[0].past_orders_sum"),
  invalidAt(["total_discount", 0, "coupon_code_used"], ["A"], "total_discount[0].coupon_code_used"),
  invalidAt(["additional_information", 0, "mpi_info"], "x", "additional_information[0].mpi_info"),
  invalidAt(["subscription", "interval"], "fortnight", "subscription.interval"),
  invalidAt(["subscription", "interval_count"], "0", "subscription.interval_count"),
  invalidAt(["subscription", "billing_cycle"], "x", "subscription.billing_cycle"),
  invalidAt(["subscription", "billing_cycle"], 1.5, "subscription.billing_cycle"),
  invalidAt(["subscription", "promotion_cycle"], "x", "subscription.promotion_cycle"),
  invalidAt(["subscription", "contract_amount"], "x", "subscription.contract_amount"),
  invalidAt(["subscription", "contract_start"], "tomorrow", "subscription.contract_start"),
  ...["cart_items", "account_owner", "total_discount", "additional_information"].flatMap((f) => [invalid(f, "x"), invalid(f, { a: 1 }), invalid(f, 5)]),
  invalid("subscription", "x"),
  invalid("subscription", ["month"]),
];

const APM_REFUSALS: Refusal[] = [
  ...["amount", "currency", "order_no"].map((f) => missing(f)),
  invalid("amount", "abc"),
  invalid("return_url", "shop.example.com/return"),
  invalid("person", "x"),
  invalidAt(["person", "email"], "nobody", "person.email"),
  invalidAt(["person", "phone_country_code"], "BRA", "person.phone_country_code"),
  invalidAt(["person", "address_country"], "Brazil", "person.address_country"),
  invalidAt(["person", "documents"], "x", "person.documents"),
  invalidAt(["person", "documents", "labels", "bank_account", "currency"], "RE", "person.documents.labels.bank_account.currency"),
  invalidAt(["person", "bank_account", "branch_country"], "BRA", "person.bank_account.branch_country"),
  invalidAt(["person", "bank_account", "bank"], "341", "person.bank_account.bank"),
];

async function expectRefused(body: Body, { field, code }: Pick<Refusal, "field" | "code">, options = {}) {
  const { app, deps } = await makeApp(options);
  const before = snapshotState(deps);
  const res = await postAuthorise(app, body);
  expect(res.status, res.text).toBe(400);
  expect(res.type).toBe("application/xml");
  const xml = parseXml(res.text);
  expect(textOf(xml.order_status)).toBe("0");
  expect(textOf(xml.result_info)).toMatch(new RegExp(`^${code}:`));
  expect(textOf(xml.result_info)).toContain(field);
  expect(errorFields(res.text)).toEqual([field]);
  expect(textOf(xml.encryption_data)).toMatch(/^[0-9a-f]{64}$/);
  expect(snapshotState(deps)).toEqual(before);
  return xml;
}

describe("direct payment refusals", () => {
  test("the full request they start from is accepted", async () => {
    const { app } = await makeApp();
    expect((await postAuthorise(app, fullPaymentRequest())).status).toBe(200);
  });

  test.each(DIRECT_REFUSALS)("$name → 400 $code naming $field", async (refusal) => {
    await expectRefused(refusal.change(fullPaymentRequest()), refusal);
  });

  test("a refusal echoes the merchant's identifiers", async () => {
    const body = fullPaymentRequest({ amount: "abc" });
    const xml = await expectRefused(body, { field: "amount", code: "I0002" });
    expect(textOf(xml.merchant_id)).toBe(body.merchant_id);
    expect(textOf(xml.account_id)).toBe(body.account_id);
    expect(textOf(xml.order_no)).toBe(body.order_no);
  });

  test("every bad field is named in one answer, card data included", async () => {
    const { app } = await makeApp();
    const body = without("card", "security_code")(fullPaymentRequest({ amount: "abc", currency: "US" }));
    const res = await postAuthorise(app, body);
    expect(res.status).toBe(400);
    expect(errorFields(res.text).sort()).toEqual(["amount", "card", "currency", "security_code"]);
  });

  test("paying with token_id needs neither card nor expiry nor security code", async () => {
    const { app } = await makeApp();
    const body = without("card", "expiration_month", "expiration_year", "security_code")(fullPaymentRequest({ token_id: "tok_acme_visa_4242" }));
    expect((await postAuthorise(app, body)).status).toBe(200);
  });
});

describe("APM payment refusals", () => {
  test("the full APM request they start from is accepted", async () => {
    const { app } = await makeApp();
    expect((await postAuthorise(app, fullApmRequest())).status).toBe(200);
  });

  test.each(APM_REFUSALS)("APM $name → 400 $code naming $field", async (refusal) => {
    await expectRefused(refusal.change(fullApmRequest()), refusal);
  });

  test("a payment_method without amount is refused as an APM payment, not asked for a card", async () => {
    await expectRefused(without("amount")(apmPayment()), { field: "amount", code: "I0001" });
  });
});

describe("a refused request changes nothing", () => {
  test.each([
    ["a bad amount", { amount: "abc" }, "amount"],
    ["a missing security code", { security_code: undefined }, "security_code"],
    ["an unknown token", { card: undefined, token_id: "tok_nope" }, ""],
    ["a malformed signature", { encryption_data: "xyz" }, "encryption_data"],
  ])("an unknown merchant with %s is not provisioned", async (_name, overrides, field) => {
    const { app, deps } = await makeApp();
    const before = snapshotState(deps);
    const res = await postAuthorise(app, fullPaymentRequest({ merchant_id: "CI-NEW-1", account_id: "CI-ACC", ...overrides }));
    expect(res.status).toBeGreaterThanOrEqual(400);
    if (field) expect(errorFields(res.text)).toEqual([field]);
    expect(deps.store.data.merchants.some((m) => m.merchant_id === "CI-NEW-1")).toBe(false);
    expect(snapshotState(deps)).toEqual(before);
  });

  test("a known merchant's new account is not added by a refused request", async () => {
    const { app, deps } = await makeApp();
    const before = snapshotState(deps);
    await postAuthorise(app, fullPaymentRequest({ account_id: "A-NEW", currency: "US" }));
    expect(snapshotState(deps)).toEqual(before);
  });
});

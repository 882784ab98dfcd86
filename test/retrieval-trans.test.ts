// POST /v1/retrievalTrans through HTTP: the interface document's result shape, every body format, every way to
// select, the limit, isolation between merchants and accounts, registered IPs and signatures.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import request from "supertest";
import { describe, expect, test } from "vitest";
import { createClock } from "../src/domain/clock.js";
import { startSandbox } from "../src/server/sandbox.js";
import { ACME, ANY_SIGNATURE, directPayment, makeApp, parseXml, signRequest, signResponseFields } from "./helpers.js";

const PATH = "/v1/retrievalTrans";

type App = Awaited<ReturnType<typeof makeApp>>["app"];
type Element = Record<string, unknown>;

/** A query as ACME's manual-capture account A10001 (fixtures ORD-1002 … ORD-1007); override any field. */
const queryBody = (fields: Record<string, unknown> = {}) => ({
  merchant_id: ACME.merchant_id,
  account_id: ACME.account_id,
  encryption_data: ANY_SIGNATURE,
  ...fields,
});

async function query(app: App, fields: Record<string, unknown> = {}) {
  return request(app).post(PATH).send(queryBody(fields));
}

/** The interface document's form: application/x-www-form-urlencoded, written out so repeated fields stay repeated. */
async function queryForm(app: App, pairs: [string, string][]) {
  const form = new URLSearchParams([["merchant_id", ACME.merchant_id], ["account_id", ACME.account_id], ["encryption_data", ANY_SIGNATURE], ...pairs]);
  return request(app).post(PATH).type("form").send(form.toString());
}

/** order_no of each element in order, "(not found)" marking an element with query_result 0 */
const orders = (res: { body: { orders_list: Element[] } }) =>
  res.body.orders_list.map((e) => (e.query_result === "1" ? e.order_no : `${String(e.order_no)} (not found)`));

const kind = (v: unknown) => (Array.isArray(v) ? "array" : v === null ? "null" : typeof v);

// The interface document's "Transaction query result", one row per field: name → type.
const TOP_LEVEL: [string, string][] = [
  ["merchant_id", "string"],
  ["account_id", "string"],
  ["encryption_data", "string"],
  ["return_status", "string"],
  ["return_message", "string"],
  ["orders_list", "array"],
];
const ELEMENT: [string, string][] = [
  ["amount", "string"],
  ["currency", "string"],
  ["order_no", "string"],
  ["transaction_id", "string"],
  ["reference_no", "string"],
  ["website", "string"],
  ["delivery_information", "object"],
  ["antifraud_provider", "string"],
  ["fraud_check_result", "array"],
  ["is3ds", "string"],
  ["payment_status", "string"],
  ["query_result", "string"],
  ["shopper_email", "string"],
  ["shopper_phone", "string"],
  ["subscription_result", "object"],
  ["transaction_date", "string"],
];
const DELIVERY = ["delivery_address", "delivery_city", "delivery_country", "delivery_firstname", "delivery_lastname", "delivery_postal_code", "delivery_state"];
const SUBSCRIPTION = ["contract_name", "recurring_deduction_period", "recurring_deduction_time", "recurring_id", "recurring_status"];
const FRAUD_CHECK = ["check_items", "status"];

function expectShape(element: Element): void {
  expect(Object.keys(element)).toEqual(ELEMENT.map(([name]) => name));
  for (const [name, type] of ELEMENT) expect([name, kind(element[name])]).toEqual([name, type]);
  const nested = (v: unknown) => v as Record<string, unknown>;
  for (const [object, fields] of [
    [element.delivery_information, DELIVERY],
    [element.subscription_result, SUBSCRIPTION],
  ] as const) {
    expect(Object.keys(nested(object))).toEqual(fields);
    for (const f of fields) expect(typeof nested(object)[f]).toBe("string");
  }
  for (const check of element.fraud_check_result as unknown[]) {
    expect(Object.keys(nested(check))).toEqual(FRAUD_CHECK);
    for (const f of FRAUD_CHECK) expect(typeof nested(check)[f]).toBe("string");
  }
}

describe("POST /v1/retrievalTrans: the interface document's result", () => {
  test("every field of the interface document's table is there with its type, filled from the transaction", async () => {
    const { app } = await makeApp();
    const res = await query(app, { account_id: "A10002", order_no: "ORD-1001" });
    expect(res.status).toBe(200);
    expect(res.type).toBe("application/json");
    expect(Object.keys(res.body)).toEqual(TOP_LEVEL.map(([name]) => name));
    for (const [name, type] of TOP_LEVEL) expect([name, kind(res.body[name])]).toEqual([name, type]);
    expect(res.body).toMatchObject({ merchant_id: "M10001", account_id: "A10002", return_status: "1", return_message: "OK" });
    expect(res.body.orders_list).toHaveLength(1);
    const element = res.body.orders_list[0] as Element;
    expectShape(element);
    expect(element).toEqual({
      amount: "120.00",
      currency: "USD",
      order_no: "ORD-1001",
      transaction_id: "1000000000001001",
      reference_no: "RN00001001",
      website: "https://shop.example.com",
      delivery_information: {
        delivery_address: "1 Main Street",
        delivery_city: "Springfield",
        delivery_country: "US",
        delivery_firstname: "Jane",
        delivery_lastname: "Doe",
        delivery_postal_code: "62701",
        delivery_state: "IL",
      },
      antifraud_provider: "SandgateRisk",
      fraud_check_result: [{ check_items: "velocity", status: "ACCEPT" }],
      is3ds: "0",
      payment_status: "3000",
      query_result: "1",
      shopper_email: "jane.doe@example.com",
      shopper_phone: "+1 555 0100",
      subscription_result: { contract_name: "", recurring_deduction_period: "", recurring_deduction_time: "", recurring_id: "", recurring_status: "" },
      transaction_date: "20261001100000",
    });
  });

  test("docs/operations.md lists an orders_list element's fields as they come, nested ones too; a search that matched nothing says so in the log", async () => {
    const page = readFileSync(resolve(import.meta.dirname, "../docs/operations.md"), "utf8");
    const said = /Each `orders_list` element holds, in\s+this order: ([\s\S]*?)\. Every value is a string/.exec(page)![1]!;
    const top = said.replace(/\([^)]*\)/g, "");
    const names = (text: string) => [...text.matchAll(/`([a-z_0-9]+)`/g)].map((m) => m[1]);
    const { app } = await makeApp();
    const element = (await query(app, { order_no: "ORD-1002" })).body.orders_list[0] as Record<string, Record<string, unknown>>;
    expect(names(top)).toEqual(Object.keys(element));
    const flat = said.replace(/\s+/g, " ");
    for (const field of ["delivery_information", "subscription_result"]) {
      const inner = /\(an object: ([^)]*)\)/.exec(flat.slice(flat.indexOf(`\`${field}\``)))![1]!;
      expect(names(inner), field).toEqual(Object.keys(element[field]!));
    }
    const res = await query(app, { order_no: "NO-SUCH-ORDER" });
    const log = (await request(app).get("/__sandbox/requests").query({ order_no: "NO-SUCH-ORDER" })).body as { requests: { result: string }[] };
    expect(res.status).toBe(200);
    expect(log.requests.at(-1)!.result).toBe("OK: no order matched (1 named not found)");
  });

  test("the response is signed with the merchant's key over merchant_id, account_id, return_status", async () => {
    const { app } = await makeApp();
    const res = await query(app);
    expect(res.body.encryption_data).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body.encryption_data).toBe(signResponseFields("retrievalTrans", res.body, ACME.key));
  });

  test.each([
    ["ORD-1001", "A10002", "3000"],
    ["ORD-1002", "A10001", "2000"],
    ["ORD-1003", "A10001", "4000"],
    ["ORD-1004", "A10001", "4100"],
    ["ORD-1005", "A10001", "5000"],
    ["ORD-1006", "A10001", "6000"],
    ["ORD-1007", "A10001", "2100"],
    ["ORD-1008", "A10002", "1000"],
  ])("fixture %s (%s) shows payment_status %s", async (orderNo, accountId, status) => {
    const { app } = await makeApp();
    const res = await query(app, { account_id: accountId, order_no: orderNo });
    expect(res.body.orders_list).toHaveLength(1);
    expect(res.body.orders_list[0]).toMatchObject({ order_no: orderNo, payment_status: status, query_result: "1" });
  });

  test("a payment held for review reports its REVIEW checks as they are", async () => {
    const { app } = await makeApp();
    const res = await query(app, { order_no: "ORD-1007" });
    expect(res.body.orders_list[0].fraud_check_result).toEqual([
      { check_items: "amount_above_average", status: "REVIEW" },
      { check_items: "ip_country_mismatch", status: "REVIEW" },
    ]);
  });

  test("a fixture subscription payment shows its subscription_result", async () => {
    // before its next deduction (2026-11-09): later, the deduction happens and the time moves on
    const { app } = await makeApp({ clock: createClock(() => Date.parse("2026-10-20T00:00:00.000Z")) });
    const res = await query(app, { account_id: "A10002", transaction_id: "1000000000001009" });
    expect(res.body.orders_list[0].subscription_result).toEqual({
      contract_name: "Pro plan monthly",
      recurring_deduction_period: "1 month",
      recurring_deduction_time: "2026-11-09 00:00:00",
      recurring_id: "R20261009000001",
      recurring_status: "1",
    });
  });

  test("every transaction_date is YYYYMMDDhhmmss", async () => {
    const { app } = await makeApp();
    for (const account_id of ["A10001", "A10002"]) {
      const res = await query(app, { account_id });
      expect(res.body.orders_list.length).toBeGreaterThan(0);
      for (const e of res.body.orders_list as Element[]) expect(e.transaction_date).toMatch(/^\d{14}$/);
    }
  });
});

describe("POST /v1/retrievalTrans: body formats", () => {
  const fields = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, encryption_data: ANY_SIGNATURE, order_no: "ORD-1003,ORD-1005" };
  test.each([
    ["form fields (the interface document's format)", (app: App) => request(app).post(PATH).type("form").send(new URLSearchParams(fields).toString())],
    ["JSON", (app: App) => request(app).post(PATH).send(fields)],
    ["JSON sent as a form", (app: App) => request(app).post(PATH).set("Content-Type", "application/x-www-form-urlencoded").send(JSON.stringify(fields))],
  ])("%s", async (_name, send) => {
    const { app } = await makeApp();
    const res = await send(app);
    expect(res.status).toBe(200);
    expect(res.body.return_status).toBe("1");
    expect(orders(res)).toEqual(["ORD-1003", "ORD-1005"]);
  });
});

describe("POST /v1/retrievalTrans: selection", () => {
  test.each<[string, Record<string, unknown>, string[]]>([
    ["one order_no", { order_no: "ORD-1003" }, ["ORD-1003"]],
    ["a comma-separated list, in the order asked", { order_no: "ORD-1005,ORD-1003" }, ["ORD-1005", "ORD-1003"]],
    ["a list with spaces and a trailing comma", { order_no: " ORD-1003 , ORD-1005 ," }, ["ORD-1003", "ORD-1005"]],
    ["a JSON array", { order_no: ["ORD-1003", "ORD-1005"] }, ["ORD-1003", "ORD-1005"]],
    ["the same order twice lists it once", { order_no: "ORD-1003,ORD-1003" }, ["ORD-1003"]],
    ["one transaction_id", { transaction_id: "1000000000001004" }, ["ORD-1004"]],
    ["a transaction_id as a JSON number", { transaction_id: 1000000000001004 }, ["ORD-1004"]],
    ["order_no and transaction_id together", { order_no: "ORD-1002", transaction_id: "1000000000001006" }, ["ORD-1002", "ORD-1006"]],
    ["order_no and transaction_id naming the same payment", { order_no: "ORD-1002", transaction_id: "1000000000001002" }, ["ORD-1002"]],
    ["none: the account's most recent, newest first", {}, ["ORD-1007", "ORD-1006", "ORD-1005", "ORD-1004", "ORD-1003", "ORD-1002"]],
    ["none, within start_date/end_date (both inclusive)", { start_date: "20261003092000", end_date: "20261005080500" }, ["ORD-1005", "ORD-1004", "ORD-1003"]],
    ["none, from start_date on", { start_date: "20261006000000" }, ["ORD-1007", "ORD-1006"]],
    ["none, up to end_date", { end_date: "20261002235959" }, ["ORD-1002"]],
    [
      "orders within the dates",
      { order_no: "ORD-1003,ORD-1006", start_date: "20261001000000", end_date: "20261004000000" },
      ["ORD-1003", "ORD-1006 (not found)"],
    ],
  ])("%s", async (_name, fields, expected) => {
    const { app } = await makeApp();
    const res = await query(app, fields);
    expect(res.status).toBe(200);
    expect(orders(res)).toEqual(expected);
  });

  test("the field repeated in a form body", async () => {
    const { app } = await makeApp();
    const res = await queryForm(app, [
      ["order_no", "ORD-1004"],
      ["order_no", "ORD-1002"],
      ["transaction_id", "1000000000001007"],
      ["transaction_id", "1000000000001005"],
    ]);
    expect(res.status).toBe(200);
    expect(orders(res)).toEqual(["ORD-1004", "ORD-1002", "ORD-1007", "ORD-1005"]);
  });

  test("a selected order outside the dates is reported as not found, with the order_no filled", async () => {
    const { app } = await makeApp();
    const res = await query(app, { order_no: "ORD-1006", end_date: "20261005000000" });
    expect(res.body.orders_list).toEqual([expect.objectContaining({ order_no: "ORD-1006", query_result: "0", payment_status: "" })]);
  });

  test.each([
    ["order_no", "NOPE-1", { order_no: "ORD-1002,NOPE-1" }],
    ["transaction_id", "9999999999999999", { order_no: "ORD-1002", transaction_id: "9999999999999999" }],
  ])("an unknown %s gives an element of the same shape with query_result 0", async (field, value, fields) => {
    const { app } = await makeApp();
    const res = await query(app, fields);
    expect(res.status).toBe(200);
    expect(res.body.return_status).toBe("1");
    const [found, missing] = res.body.orders_list as Element[];
    expectShape(found!);
    expectShape(missing!);
    expect(found).toMatchObject({ order_no: "ORD-1002", query_result: "1" });
    const other = field === "order_no" ? "transaction_id" : "order_no";
    expect(missing).toMatchObject({
      [field]: value,
      [other]: "",
      query_result: "0",
      amount: "",
      payment_status: "",
      transaction_date: "",
      fraud_check_result: [],
    });
    expect(Object.values(missing!.delivery_information as object).every((v) => v === "")).toBe(true);
    expect(Object.values(missing!.subscription_result as object).every((v) => v === "")).toBe(true);
  });

  test.each([
    ["an object", { order_no: { a: { b: "c" } } }, "order_no"],
    ["a list of objects", { transaction_id: [{ id: "1" }] }, "transaction_id"],
    ["a start_date that is not a date", { start_date: "2026-10-01" }, "start_date"],
    ["an end_date that does not exist", { end_date: "20260231000000" }, "end_date"],
    ["an end_date before the start_date", { start_date: "20261005000000", end_date: "20261001000000" }, "end_date"],
  ])("%s is refused with 400 naming the field", async (_name, fields, field) => {
    const { app } = await makeApp();
    const res = await query(app, fields);
    expect(res.status).toBe(400);
    expect(res.body.return_status).toBe("0");
    expect(res.body.return_message).toMatch(/^I0002:Invalid field: /);
    expect(res.body.return_message).toContain(field);
    expect(res.body.errors).toEqual([expect.objectContaining({ field })]);
  });
});

describe("POST /v1/retrievalTrans: the limit of 100 orders", () => {
  const values = (n: number) => Array.from({ length: n }, (_, i) => `ORD-X${i}`);

  test("100 values are answered, one element each", async () => {
    const { app } = await makeApp();
    const res = await query(app, { order_no: values(100).join(",") });
    expect(res.status).toBe(200);
    expect(res.body.orders_list).toHaveLength(100);
  });

  test.each([
    ["a comma list of 101", (app: App) => query(app, { order_no: values(101).join(",") })],
    [
      "the field repeated 101 times",
      (app: App) =>
        queryForm(
          app,
          values(101).map((v): [string, string] => ["order_no", v]),
        ),
    ],
    [
      "the field repeated 1500 times (qs makes an object of it)",
      (app: App) =>
        queryForm(
          app,
          values(1500).map((v): [string, string] => ["order_no", v]),
        ),
    ],
    ["100 order_no and 1 transaction_id", (app: App) => query(app, { order_no: values(100), transaction_id: "1000000000001002" })],
  ])("%s is refused with return_status 0 naming the limit", async (_name, send) => {
    const { app } = await makeApp();
    const res = await send(app);
    expect(res.status).toBe(400);
    expect(res.body.return_status).toBe("0");
    expect(res.body.return_message).toMatch(/^I0030:/);
    expect(res.body.return_message).toContain("100");
    expect(res.body.orders_list).toEqual([]);
  });
});

describe("POST /v1/retrievalTrans: isolation", () => {
  test("another merchant's transaction is never returned, even by its order_no or transaction_id", async () => {
    const { app } = await makeApp();
    const res = await query(app, { order_no: "ORD-2001", transaction_id: "2000000000002002" });
    expect(res.body.orders_list.map((e: Element) => e.query_result)).toEqual(["0", "0"]);
    const all = await query(app);
    expect(orders(all)).not.toContain("ORD-2001");
  });

  test("another account of the same merchant is not listed", async () => {
    const { app } = await makeApp();
    const res = await query(app, { order_no: "ORD-1001" });
    expect(res.body.orders_list[0]).toMatchObject({ order_no: "ORD-1001", query_result: "0" });
  });

  test("a merchant provisioned on first use with the same account id sees nothing of ACME's", async () => {
    const { app } = await makeApp();
    const res = await query(app, { merchant_id: "CI-JOB-7" });
    expect(res.status).toBe(200);
    expect(res.body.orders_list).toEqual([]);
    const byId = await query(app, { merchant_id: "CI-JOB-7", transaction_id: "1000000000001002" });
    expect(byId.body.orders_list[0]).toMatchObject({ transaction_id: "1000000000001002", query_result: "0", amount: "" });
  });
});

describe("POST /v1/retrievalTrans: payments made through /v1/authorise", () => {
  const NOW = Date.UTC(2027, 0, 15, 8, 30, 5);

  test("a manual-capture payment with a subscription shows 2000 and its subscription", async () => {
    const { app } = await makeApp({ clock: createClock(() => NOW) });
    const subscription = {
      contract: "C-GOLD",
      contract_name: "Gold monthly",
      contract_amount: "10.00",
      interval: "month",
      interval_count: "1",
      billing_cycle: 12,
    };
    const payment = directPayment({ subscription, shopper_phone: "+44 20 7946 0000", website: "https://gold.example.com" });
    const paid = await request(app).post("/v1/authorise").send(payment);
    const xml = parseXml(paid.text);
    expect(xml.order_status).toBe("1");

    const res = await query(app, { order_no: payment.order_no });
    expect(res.status).toBe(200);
    expect(res.body.orders_list).toHaveLength(1);
    const element = res.body.orders_list[0] as Element;
    expectShape(element);
    expect(element).toMatchObject({
      amount: "10.00",
      currency: "USD",
      order_no: payment.order_no,
      transaction_id: xml.transaction_id,
      website: "https://gold.example.com",
      payment_status: "2000",
      query_result: "1",
      shopper_email: "jane@example.com",
      shopper_phone: "+44 20 7946 0000",
      transaction_date: "20270115083005",
      subscription_result: {
        contract_name: "Gold monthly",
        recurring_deduction_period: "1 month",
        recurring_deduction_time: "2027-02-15 08:30:05",
        recurring_id: xml.recurring_id,
        recurring_status: "1",
      },
    });
    expect(element.subscription_result).toMatchObject({ recurring_deduction_time: xml.recurring_deduction_time });
  });

  test("new payments come first when nothing is selected, the later of two at the same instant first", async () => {
    const { app } = await makeApp({ clock: createClock(() => NOW) });
    const first = directPayment();
    const second = directPayment();
    for (const p of [first, second]) expect((await request(app).post("/v1/authorise").send(p)).status).toBe(200);
    const res = await query(app);
    expect(orders(res).slice(0, 3)).toEqual([second.order_no, first.order_no, "ORD-1007"]);
  });
});

describe("POST /v1/retrievalTrans: registered IPs", () => {
  test("M10002 registers only 203.0.113.10/11: a local call is refused with 403 naming the IP", async () => {
    const { app } = await makeApp();
    const res = await query(app, { merchant_id: "M10002", account_id: "A20001" });
    expect(res.status).toBe(403);
    expect(res.type).toBe("application/json");
    expect(res.body.return_status).toBe("0");
    expect(res.body.return_message).toMatch(/^I0012:/);
    expect(res.body.return_message).toContain("127.0.0.1");
    expect(res.body.return_message).toContain("203.0.113.10");
    expect(res.body.orders_list).toEqual([]);
  });

  test("over a real listening server, ACME (127.0.0.1 registered) is answered and M10002 refused", async () => {
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "test-seed" });
    try {
      const post = (fields: Record<string, string>) =>
        fetch(`${sandbox.url}${PATH}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields) });
      const base = { encryption_data: ANY_SIGNATURE, order_no: "ORD-1002" };
      const acme = await post({ ...base, merchant_id: ACME.merchant_id, account_id: ACME.account_id });
      expect(acme.status).toBe(200);
      expect(((await acme.json()) as { orders_list: Element[] }).orders_list[0]).toMatchObject({ order_no: "ORD-1002", query_result: "1" });
      const harbor = await post({ ...base, merchant_id: "M10002", account_id: "A20001" });
      expect(harbor.status).toBe(403);
      expect(((await harbor.json()) as { return_message: string }).return_message).toContain("127.0.0.1 is not registered");
    } finally {
      await sandbox.close();
    }
  });
});

describe("POST /v1/retrievalTrans: encryption_data", () => {
  test("missing encryption_data is refused with 400 and I0013", async () => {
    const { app } = await makeApp();
    const res = await query(app, { encryption_data: undefined });
    expect(res.status).toBe(400);
    expect(res.body.return_status).toBe("0");
    expect(res.body.return_message).toContain("I0013");
  });

  test("strict mode accepts the real scheme's signature (merchant_id, account_id, key)", async () => {
    const { app } = await makeApp({ signatureMode: "strict" });
    const fields = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, order_no: "ORD-1002" };
    const res = await request(app)
      .post(PATH)
      .send({ ...fields, encryption_data: signRequest("retrievalTrans", fields, ACME.key) });
    expect(res.status).toBe(200);
    expect(res.headers["x-sandbox-signature"]).toBe("matched");
    expect(orders(res)).toEqual(["ORD-1002"]);
  });

  test("strict mode refuses a wrong signature, names the fields signed, and keeps the expected value to the request log", async () => {
    const { app } = await makeApp({ signatureMode: "strict" });
    const fields = { merchant_id: ACME.merchant_id, account_id: ACME.account_id };
    const res = await request(app)
      .post(PATH)
      .send({ ...fields, encryption_data: signRequest("retrievalTrans", fields, "wrong_key_123") });
    expect(res.status).toBe(400);
    expect(res.body.return_status).toBe("0");
    expect(res.body.return_message).toMatch(/^I0014:/);
    expect(res.body.return_message).toContain("signed over merchant_id, account_id, then the secret key");
    expect(res.text).not.toContain(signRequest("retrievalTrans", fields, ACME.key));
    expect(res.body).toMatchObject({ encryption_data: "", errors: [{ field: "encryption_data" }] });
    expect(res.body.orders_list).toEqual([]);
  });
});

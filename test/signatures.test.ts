// encryption_data on /v1/authorise: lenient and strict checks, the request log that shows what
// was signed (card data and key masked), and the signature Sandgate puts on its answers.
import qs from "qs";
import request from "supertest";
import { describe, expect, test } from "vitest";
import type { RequestLogEntry } from "../src/store/request-log.js";
import { KEY_SHOWN, signatureFields } from "../src/domain/signature.js";
import { GATEWAY_OPERATIONS, type SignedOperation } from "../src/domain/gateway-operations.js";
import {
  ACME,
  ANY_SIGNATURE,
  apmPayment,
  directPayment,
  errorFields,
  makeApp,
  parseXml,
  postAuthorise,
  signRequest,
  signResponseFields,
  snapshotState,
  textOf,
  type XmlObject,
} from "./helpers.js";

type App = Awaited<ReturnType<typeof makeApp>>["app"];

const strict = () => makeApp({ signatureMode: "strict" });

/** A body signed the real way with `key`. */
function signed(body: Record<string, unknown>, key: string = ACME.key): Record<string, unknown> {
  return { ...body, encryption_data: signRequest("authorise", body, key) };
}

async function logEntries(app: App, merchantId: string, orderNo: string): Promise<RequestLogEntry[]> {
  const res = await request(app).get("/__sandbox/requests").query({ merchant_id: merchantId, order_no: orderNo });
  expect(res.status).toBe(200);
  return (res.body as { requests: RequestLogEntry[] }).requests;
}

describe("lenient mode (the default)", () => {
  test.each([
    ["lowercase", "0123456789abcdef".repeat(4)],
    ["uppercase", "0123456789ABCDEF".repeat(4)],
    ["the documentation's placeholder", ANY_SIGNATURE],
  ])("any well-formed value is accepted (%s) and flagged as a mismatch", async (_name, encryption_data) => {
    const { app } = await makeApp();
    const res = await postAuthorise(app, directPayment({ encryption_data }));
    expect(res.status).toBe(200);
    expect(res.get("X-Sandbox-Signature")).toBe("mismatch");
  });

  test("a correct signature is flagged as matched", async () => {
    const { app } = await makeApp();
    const res = await postAuthorise(app, signed(directPayment()));
    expect(res.status).toBe(200);
    expect(res.get("X-Sandbox-Signature")).toBe("matched");
  });

  test("the request log shows the signed fields, the signing string, expected and received values", async () => {
    const { app } = await makeApp();
    const body = directPayment({ order_no: "SIG-LOG-1", card: "5555555555554444", security_code: "7391", expiration_month: "07", expiration_year: "2031" });
    await postAuthorise(app, body);
    await postAuthorise(app, directPayment({ order_no: "SIG-LOG-2" }));

    const entries = await logEntries(app, ACME.merchant_id, "SIG-LOG-1");
    expect(entries).toHaveLength(1);
    const entry = entries[0]!;
    expect(entry).toMatchObject({
      operation: "authorise",
      merchant_id: ACME.merchant_id,
      order_no: "SIG-LOG-1",
      http_status: 200,
      rule: "default/approve-everything-else",
    });
    expect(entry.signature).toMatchObject({
      mode: "lenient",
      fields: signatureFields.authorise.request,
      expected: signRequest("authorise", body, ACME.key),
      received: ANY_SIGNATURE,
      matched: false,
    });
    // the fields' values in order, card and security code masked, then the masked key
    const shown = [ACME.merchant_id, ACME.account_id, "SIG-LOG-1", "USD", "10.00", "Jane", "Doe", "555555******4444", "2031", "07", "****", "jane@example.com"];
    expect(signatureFields.authorise.request).toEqual([
      "merchant_id",
      "account_id",
      "order_no",
      "currency",
      "amount",
      "first_name",
      "last_name",
      "card",
      "expiration_year",
      "expiration_month",
      "security_code",
      "shopper_email",
    ]);
    expect(entry.signature?.signingString).toBe(shown.join("") + KEY_SHOWN);
  });

  test("the log never holds the full card number, the security code or the secret key", async () => {
    const { app } = await makeApp();
    const body = signed(directPayment({ order_no: "SIG-LOG-3", card: "4000000000009235", security_code: "8264" }));
    await postAuthorise(app, body);
    const [entry] = await logEntries(app, ACME.merchant_id, "SIG-LOG-3");
    expect(entry?.signature?.matched).toBe(true);
    // hex signatures may contain any digit run by chance: look everywhere else
    const { expected: _e, received: _r, ...rest } = entry!.signature!;
    const shown = JSON.stringify({ ...entry, signature: rest });
    expect(shown).not.toContain("4000000000009235");
    expect(shown).not.toContain("8264");
    expect(shown).not.toContain(ACME.key);
    expect(shown).toContain("400000******9235");
  });

  test("the request log is filtered by merchant and order", async () => {
    const { app } = await makeApp();
    await postAuthorise(app, directPayment({ order_no: "SHARED-1" }));
    await postAuthorise(app, directPayment({ merchant_id: "OTHER-M", order_no: "SHARED-1" }));
    const entries = await logEntries(app, "OTHER-M", "SHARED-1");
    expect(entries.map((e) => e.merchant_id)).toEqual(["OTHER-M"]);
  });
});

const MALFORMED: [name: string, value: unknown, shown: RegExp][] = [
  ["missing", undefined, /missing/],
  ["empty", "", /missing/],
  ["63 hex characters", "a".repeat(63), /63 characters/],
  ["65 hex characters", "a".repeat(65), /65 characters/],
  ["64 characters, not hexadecimal", "g".repeat(64), /not all hexadecimal/],
  ["a number", 12345, /a number/],
  ["a list", ["a".repeat(64)], /a list/],
  ["an object", { sig: "a".repeat(64) }, /an? object/],
];

describe.each(["lenient", "strict"] as const)("malformed encryption_data in %s mode", (signatureMode) => {
  test.each(MALFORMED)("%s → 400 I0013, nothing changes", async (_name, value, shown) => {
    const { app, deps } = await makeApp({ signatureMode });
    const before = snapshotState(deps);
    const res = await postAuthorise(app, directPayment({ encryption_data: value }));
    expect(res.status).toBe(400);
    expect(res.type).toBe("application/xml");
    const info = textOf(parseXml(res.text).result_info);
    expect(info).toMatch(/^I0013:.*encryption_data/);
    expect(info).toMatch(shown);
    expect(errorFields(res.text)).toEqual(["encryption_data"]);
    expect(snapshotState(deps)).toEqual(before);
  });
});

describe("strict mode", () => {
  test("a correct signature is accepted, in lower or upper case", async () => {
    const { app } = await strict();
    const body = signed(directPayment());
    const res = await postAuthorise(app, body);
    expect(res.status).toBe(200);
    expect(res.get("X-Sandbox-Signature")).toBe("matched");
    const upper = signed(directPayment());
    expect((await postAuthorise(app, { ...upper, encryption_data: String(upper.encryption_data).toUpperCase() })).status).toBe(200);
  });

  test("fields left out of the body are signed as empty strings", async () => {
    const { app } = await strict();
    const body = directPayment();
    for (const field of ["first_name", "last_name", "shopper_email"]) delete body[field];
    expect((await postAuthorise(app, signed(body))).status).toBe(200);
  });

  test("a form body is signed over the same values", async () => {
    const { app } = await strict();
    const res = await request(app)
      .post("/v1/authorise")
      .type("form")
      .send(qs.stringify(signed(directPayment())));
    expect(res.status, res.text).toBe(200);
  });

  test("a wrong signature → 400 I0014 that says which fields were signed (never the expected value nor the key), and nothing changes", async () => {
    const { app, deps } = await strict();
    const body = directPayment({ card: "4000000000009235", security_code: "8264" });
    const expected = signRequest("authorise", body, ACME.key);
    const before = snapshotState(deps);
    const res = await postAuthorise(app, body);
    expect(res.status).toBe(400);
    const info = textOf(parseXml(res.text).result_info);
    expect(info).toMatch(/^I0014:/);
    expect(info).toContain(`signed over ${signatureFields.authorise.request.join(", ")}, then the secret key`);
    expect(res.text).not.toContain(expected);
    expect(res.text).not.toContain(ACME.key.slice(-2) + "<");
    expect(res.text).not.toContain(ACME.key);
    expect(info).not.toContain("4000000000009235");
    expect(snapshotState(deps)).toEqual(before);
  });

  test("a signature over other values (the amount changed after signing) is refused", async () => {
    const { app } = await strict();
    const body = signed(directPayment({ amount: "10.00" }));
    const res = await postAuthorise(app, { ...body, amount: "1000.00" });
    expect(res.status).toBe(400);
    expect(textOf(parseXml(res.text).result_info)).toMatch(/^I0014:/);
  });

  test("a provisioned merchant's key is sk_test_<merchant_id>", async () => {
    const { app } = await strict();
    const body = directPayment({ merchant_id: "CI-STRICT-1" });
    expect((await postAuthorise(app, signed(body, ACME.key))).status).toBe(400);
    const res = await postAuthorise(app, signed(body, "sk_test_CI-STRICT-1"));
    expect(res.status, res.text).toBe(200);
  });
});

describe("strict mode: a request's own fields are checked before its signature", () => {
  const path = (op: SignedOperation) => GATEWAY_OPERATIONS[op].path;

  test("an authorise without expiry and security code, wrongly signed → I0001 naming those fields (not I0014), and nothing changes", async () => {
    const { app, deps } = await strict();
    const body = directPayment();
    for (const field of ["expiration_month", "expiration_year", "security_code"]) delete body[field];
    const before = snapshotState(deps);
    const res = await postAuthorise(app, body);
    expect(res.status).toBe(400);
    expect(textOf(parseXml(res.text).result_info)).toMatch(/^I0001:/);
    expect(errorFields(res.text)).toEqual(["expiration_month", "expiration_year", "security_code"]);
    expect(snapshotState(deps)).toEqual(before);
    // signed correctly, the same body gets the same refusal: the order of checks says nothing of the key
    const again = await postAuthorise(app, signed(body));
    expect(textOf(parseXml(again.text).result_info)).toMatch(/^I0001:/);
  });

  test("fields in order, wrongly signed → I0014 with its <errors> block naming encryption_data", async () => {
    const { app } = await strict();
    const res = await postAuthorise(app, directPayment());
    expect(textOf(parseXml(res.text).result_info)).toMatch(/^I0014:/);
    expect(errorFields(res.text)).toEqual(["encryption_data"]);
  });

  test.each([
    ["capture", { capture_orders: undefined }, "capture_orders", "I0031"],
    ["retrievalTrans", { start_date: "yesterday" }, "start_date", "I0002"],
    ["payout", { payment_amount: undefined, source_amount: undefined }, "payment_amount", "I0001"],
  ] as const)("%s with a bad field, wrongly signed → its field's refusal first (JSON errors)", async (op, change, field, code) => {
    const { app, deps } = await strict();
    const before = snapshotState(deps);
    const body: Record<string, unknown> = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, encryption_data: ANY_SIGNATURE, ...change };
    const res = await request(app).post(path(op)).send(body);
    expect(res.status).toBe(400);
    const answer = res.body as { return_message: string; errors: { field: string }[] };
    expect(answer.return_message).toMatch(new RegExp(`^${code}:`));
    expect(answer.errors.map((e) => e.field)).toContain(field);
    expect(snapshotState(deps)).toEqual(before);
  });
});

describe("every refusal lists its errors, as docs/operations.md says", () => {
  test("an XML refusal of no one field (an unknown scenario) carries <errors> with one error and its text", async () => {
    const { app } = await makeApp();
    const res = await request(app).post("/v1/authorise").set("X-Sandbox-Scenario", "no-such-scenario").send(directPayment());
    expect(res.status).toBe(400);
    const parsed = parseXml(res.text);
    const info = textOf(parsed.result_info);
    const error = (parsed.errors as XmlObject).error as XmlObject;
    expect(textOf(error.field)).toBe("");
    expect(info).toContain(textOf(error.message));
    expect(textOf(error.message).length).toBeGreaterThan(0);
  });

  test("a JSON refusal of no one field carries errors too", async () => {
    const { app } = await makeApp();
    const res = await request(app).post(GATEWAY_OPERATIONS.retrievalTrans.path).set("X-Sandbox-Scenario", "no-such-scenario").send({
      merchant_id: ACME.merchant_id,
      account_id: ACME.account_id,
      encryption_data: ANY_SIGNATURE,
    });
    expect(res.status).toBe(400);
    const answer = res.body as { return_message: string; errors: { field: string; message: string }[] };
    expect(answer.errors).toHaveLength(1);
    expect(answer.errors[0]!.field).toBe("");
    expect(answer.return_message).toContain(answer.errors[0]!.message);
  });
});

describe("the response's encryption_data", () => {
  const responseCases = [
    { name: "an approved direct payment", body: () => directPayment(), key: ACME.key, status: 200 },
    { name: "a declined direct payment", body: () => directPayment({ card: "4000000000000002" }), key: ACME.key, status: 200 },
    { name: "a provisioned merchant's payment", body: () => directPayment({ merchant_id: "CI-RESP-1" }), key: "sk_test_CI-RESP-1", status: 200 },
    { name: "an APM payment", body: () => apmPayment(), key: ACME.key, status: 200 },
    { name: "a refusal", body: () => directPayment({ amount: "abc" }), key: ACME.key, status: 400 },
    { name: "a refusal for an unknown token", body: () => directPayment({ card: undefined, token_id: "tok_x" }), key: ACME.key, status: 404 },
  ];

  test.each(responseCases)("$name: sha256 of the response fields of data/signature-fields.json, then the key", async ({ body, key, status }) => {
    const { app } = await makeApp();
    const res = await postAuthorise(app, body());
    expect(res.status).toBe(status);
    const xml = parseXml(res.text);
    const fields = Object.fromEntries(signatureFields.authorise.response.map((f) => [f, textOf(xml[f])]));
    expect(textOf(xml.encryption_data)).toBe(signResponseFields("authorise", fields, key));
  });
});

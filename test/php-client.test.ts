// The gateway's public PHP client, as merchants run it: a direct payment sent form-encoded with
// `payment_method` beside `card`, the device fields under its own (misspelled) names `brower` and
// `brower_lang`, `platform`, and `Accept: application/xml`; signed as it signs (sha256 of the
// signing fields' values, then the key); the answer read the way it reads it,
// json_decode(json_encode(simplexml_load_string($xml)), true): a map of element names where a text
// element is a string, an empty element an empty array, and a repeated element a list.
import request from "supertest";
import { describe, expect, test } from "vitest";
import { convert } from "xmlbuilder2";
import { ACME, makeApp, nextOrderNo, signRequest, signResponseFields } from "./helpers.js";

type PhpValue = string | PhpValue[] | { [key: string]: PhpValue };

/** What PHP's SimpleXML + json_encode + json_decode(…, true) makes of the root's children. */
function asPhpArray(xml: string): Record<string, PhpValue> {
  const php = (v: unknown): PhpValue => {
    if (typeof v === "string") return v;
    if (Array.isArray(v)) return v.map(php);
    const entries = Object.entries(v as Record<string, unknown>);
    // an empty element is an empty SimpleXMLElement: json_encode writes {}, json_decode(…, true) reads []
    return entries.length === 0 ? [] : Object.fromEntries(entries.map(([k, c]) => [k, php(c)]));
  };
  const doc = convert(xml, { format: "object" }) as Record<string, unknown>;
  return php(Object.values(doc)[0]) as Record<string, PhpValue>;
}

/** The form body the PHP client builds for a card payment. */
function phpClientPayment(overrides: Record<string, string> = {}): Record<string, string> {
  const body: Record<string, string> = {
    merchant_id: ACME.merchant_id,
    account_id: ACME.account_id,
    order_no: nextOrderNo("PHP"),
    currency: "EUR",
    amount: "49.90",
    first_name: "Jean",
    last_name: "Dupont",
    shopper_email: "jean@example.com",
    card: "4242424242424242",
    expiration_year: "2030",
    expiration_month: "04",
    security_code: "737",
    payment_method: "card",
    os: "Windows",
    brower: "Chrome",
    brower_lang: "fr-FR",
    time_zone: "+1",
    resolution: "1920x1080",
    platform: "php-sdk",
    shopper_ip: "198.51.100.20",
    ...overrides,
  };
  body.encryption_data = signRequest("authorise", body, ACME.key);
  return body;
}

/** Every child of a direct payment's answer, in the interface document's order: the same keys on every answer. */
const KEYS = [
  "merchant_id",
  "account_id",
  "order_no",
  "amount",
  "currency",
  "transaction_id",
  "card",
  "order_status",
  "result_info",
  "contract_name",
  "recurring_id",
  "recurring_deduction_period",
  "recurring_deduction_time",
  "note",
  "token_id",
  "connector",
  "threeds_result",
  "risk_action",
  "risk_score",
  "risk_reasons",
  "encryption_data",
];

describe("the gateway's PHP client against Sandgate in strict mode", () => {
  const send = async (body: Record<string, string>) => {
    const { app } = await makeApp({ signatureMode: "strict" });
    return request(app).post("/v1/authorise").type("form").set("Accept", "application/xml").send(new URLSearchParams(body).toString());
  };

  test("its card payment is accepted, and the answer reads as it reads it: same keys, strings, a verifiable signature", async () => {
    const sent = phpClientPayment();
    const res = await send(sent);
    expect(res.status, res.text).toBe(200);
    expect(res.type).toBe("application/xml");
    const answer = asPhpArray(res.text);
    expect(Object.keys(answer)).toEqual(KEYS);
    expect(answer).toMatchObject({
      merchant_id: ACME.merchant_id,
      order_no: sent.order_no,
      amount: "49.90",
      currency: "EUR",
      order_status: "1",
      result_info: "0000:Success",
      card: "424242******4242",
    });
    // no subscription: its keys are there, empty (PHP sees empty arrays), not missing
    for (const key of ["contract_name", "recurring_id", "recurring_deduction_period", "recurring_deduction_time", "note", "token_id"])
      expect(answer[key], key).toEqual([]);
    // two reasons: a list of maps, as SimpleXML gives a repeated element
    expect(answer.risk_reasons).toEqual([
      { name: "velocity", status: "ACCEPT" },
      { name: "ip_country_match", status: "ACCEPT" },
    ]);
    // the client checks the answer's signature with the same key
    const signed = Object.fromEntries(Object.entries(answer).map(([k, v]) => [k, typeof v === "string" ? v : ""]));
    expect(answer.encryption_data).toBe(signResponseFields("authorise", signed, ACME.key));
  });

  test("a signature made without the key is refused in strict mode, in XML the client can read", async () => {
    const sent = { ...phpClientPayment(), encryption_data: "0".repeat(64) };
    const res = await send(sent);
    expect(res.status).toBe(400);
    expect(res.type).toBe("application/xml");
    expect(asPhpArray(res.text).result_info).toMatch(/^I\d{4}:/);
  });
});

// verify's comparison, case by case: each kind of difference in each format, what is compared by
// shape only, what must agree, --ignore, and ids mapped from the real gateway's to Sandgate's.
import { describe, expect, test } from "vitest";
import { compareAnswers, type Answer, type CompareContext } from "../src/proof/compare.js";
import { readTree } from "../src/proof/documents.js";
import { IdMap } from "../src/proof/id-map.js";
import { ignoreMatcher } from "../src/proof/ignore.js";
import { shapeOf } from "../src/proof/shapes.js";
import { cardResolver, prepareRequest } from "../src/proof/replay.js";
import type { HarEntry } from "../src/proof/har.js";
import { passesLuhn } from "../src/domain/card-numbers.js";
import { signRequest } from "./helpers.js";

const xml = (children: string) => ({
  status: 200,
  contentType: "application/xml",
  body: `<?xml version="1.0" encoding="UTF-8"?>\n<respon>${children}</respon>`,
  location: "",
});
const json = (value: unknown) => ({ status: 200, contentType: "application/json; charset=utf-8", body: JSON.stringify(value), location: "" });
const ctx = (over: Partial<CompareContext> = {}): CompareContext => ({ map: (v) => v, echoes: new Map(), ignored: () => false, ...over });
const kinds = (a: Answer, b: Answer, c = ctx()) => compareAnswers(a, b, c).map((d) => `${d.kind} ${d.path}`);

describe("compareAnswers", () => {
  const base = "<merchant_id>M1</merchant_id><transaction_id>123456789</transaction_id><amount>10.00</amount><result_info>0000:Success</result_info><note/>";

  test("the same answer with other ids, times and signatures has no difference", () => {
    const a = json({ transaction_id: "111111", encryption_data: "a".repeat(64), transaction_date: "20261126101010", amount: "1.00" });
    const b = json({ transaction_id: "222222222", encryption_data: "b".repeat(64), transaction_date: "20251231235959", amount: "1.00" });
    expect(kinds(a, b)).toEqual([]);
    expect(kinds(xml(base), xml(base.replace("123456789", "987")))).toEqual([]);
  });

  test.each([
    ["a renamed element", base.replace(/note/g, "remark"), ["missing respon.note", "extra respon.remark"]],
    [
      "swapped children",
      "<transaction_id>123456789</transaction_id><merchant_id>M1</merchant_id><amount>10.00</amount><result_info>0000:Success</result_info><note/>",
      ["order respon"],
    ],
    ["an amount with one decimal", base.replace("10.00", "10.0"), ["shape respon.amount"]],
    ["a changed result code", base.replace("0000:Success", "D0051:Insufficient funds"), ["value respon.result_info"]],
    ["a missing element", base.replace("<note/>", ""), ["missing respon.note"]],
    ["an empty element set", base.replace("<note/>", "<note>x</note>"), ["shape respon.note"]],
    ["a cut-off body", base.replace("</note>", "").replace("<note/>", "<note>"), ["shape body"]],
  ])("XML: %s", (_name, sandgate, expected) => {
    expect(kinds(xml(base), xml(sandgate))).toEqual(expected);
  });

  test("status and content type are reported alone: a body of another status or format is not compared field by field", () => {
    expect(kinds(xml(base), { ...json({ a: 1 }), status: 400 })).toEqual(["status status", "content_type content-type"]);
    expect(kinds(json({ a: "1" }), { ...json({ a: "1" }), contentType: "text/html" })).toEqual(["content_type content-type"]);
    // a charset is not a difference of content type
    expect(kinds(json({ a: "1" }), { ...json({ a: "1" }), contentType: "application/json" })).toEqual([]);
  });

  test('JSON: "1" vs 1, lists of another length, nesting', () => {
    const rec = json({ return_status: "1", orders: [{ capture_status: "1", error_message: "" }], extra: { a: "x" } });
    const ours = json({
      return_status: 1,
      orders: [
        { capture_status: "1", error_message: "" },
        { capture_status: "0", error_message: "" },
      ],
      extra: "x",
    });
    expect(kinds(rec, ours)).toEqual(["shape return_status", "extra orders[1]", "shape extra"]);
  });

  test("values that must agree: status codes, result texts, currencies, amounts and what the request sent", () => {
    const rec = json({ refund_status: "2", refund_message: "0000:Accepted", currency: "USD", refund_amount: "5.00", note: "hello", connector: "A" });
    const ours = json({ refund_status: "1", refund_message: "0000:Success", currency: "EUR", refund_amount: "6.00", note: "bye", connector: "B" });
    const echoes = new Map([["note", new Set(["hello"])]]);
    expect(kinds(rec, ours, ctx({ echoes }))).toEqual(["value refund_status", "value refund_message", "value currency", "value refund_amount", "value note"]);
  });

  test("an echoed id is compared mapped: the recorded transaction_id stands for Sandgate's", () => {
    const echoes = new Map([["transaction_id", new Set(["REAL-123456"])]]);
    const map = (v: string) => (v === "REAL-123456" ? "SG-999999" : v);
    expect(kinds(json({ transaction_id: "REAL-123456" }), json({ transaction_id: "SG-999999" }), ctx({ echoes, map }))).toEqual([]);
    expect(kinds(json({ transaction_id: "REAL-123456" }), json({ transaction_id: "SG-000000" }), ctx({ echoes, map }))).toEqual(["value transaction_id"]);
  });

  test("form bodies and redirects: a Location's query is compared field by field", () => {
    const at = (q: string): Answer => ({ status: 303, contentType: "text/plain", body: "", location: `https://shop.example/return?${q}` });
    expect(kinds(at("order_status=1&transaction_id=1111111"), at("order_status=1&transaction_id=2222222"))).toEqual([]);
    expect(kinds(at("order_status=1&result_info=0000%3ASuccess"), at("order_status=0&result_info=0000%3ASuccess"))).toEqual(["value location.order_status"]);
    const form = (body: string): Answer => ({ status: 200, contentType: "application/x-www-form-urlencoded", body, location: "" });
    expect(kinds(form("a=1&b=x"), form("a=1"))).toEqual(["missing b"]);
  });

  test("HTML: the loading page's form name and method must agree; its inputs are fields", () => {
    const page = (name: string, method: string, inputs: [string, string][]) => ({
      status: 200,
      contentType: "text/html; charset=utf-8",
      body: `<html><head><title>Loading...</title></head><body><form name="${name}" method="${method}" action="https://gw.example/pay/1234567"></form><script type="application/json" id="x">${JSON.stringify(inputs)}</script></body></html>`,
      location: "",
    });
    const inputs: [string, string][] = [
      ["merNo", "M1"],
      ["orderAmount", "10.00"],
    ];
    expect(kinds(page("theForm", "POST", inputs), page("theForm", "post", inputs))).toEqual([]);
    expect(kinds(page("theForm", "POST", inputs), page("form1", "GET", [["merNo", "M1"]]))).toEqual([
      "value form.name",
      "value form.method",
      "missing form.inputs.orderAmount",
    ]);
  });

  test("--ignore: a full path, a wildcard, a bare field name anywhere", () => {
    const rec = json({ orders: [{ risk_score: "1", date: "x" }], risk_score: "1" });
    const ours = json({ orders: [{ risk_score: 2, date: 3 }], risk_score: 2 });
    expect(kinds(rec, ours, ctx({ ignored: ignoreMatcher(["risk_score", "orders[*].date"]) }))).toEqual([]);
    expect(kinds(rec, ours, ctx({ ignored: ignoreMatcher(["orders[0]"]) }))).toEqual(["shape risk_score"]);
  });
});

describe("shapes", () => {
  test.each([
    ["", "empty"],
    ["10.00", "amount with two decimals"],
    ["10.5", "decimal"],
    ["12345", "digits"],
    ["-1", "negative integer"],
    ["0000:Success", "CODE:text"],
    ["a".repeat(64), "64-hex signature"],
    ["2026-11-26 10:00:00", "YYYY-MM-DD HH:MM:SS"],
    ["2026-11-26T10:00:00+00:00", "ISO 8601 date-time"],
    ["424242******4242", "masked card"],
    ["https://x.example/a", "URL"],
  ])("%j is %s", (value, shape) => {
    expect(shapeOf(value)).toBe(shape);
  });

  test("fourteen digits are a time only in a field named for one", () => {
    expect(shapeOf("20261126101010", "transaction_date")).toBe("YYYYMMDDhhmmss");
    expect(shapeOf("20261126101010", "transaction_id")).toBe("digits");
  });
});

describe("IdMap", () => {
  test("learns ids from answers side by side and maps them in later requests: whole, in lists, in page addresses", () => {
    const ids = new IdMap();
    const rec = readTree(
      "json",
      JSON.stringify({ transaction_id: "REAL000001", issuer_url: "https://gw.example/pay/3ds/abcdef", order_status: "-1", amount: "10.00" }),
    );
    const ours = readTree(
      "json",
      JSON.stringify({ transaction_id: "SG00000009", issuer_url: "http://127.0.0.1:9/pay/3ds/zyxwvu", order_status: "-2", amount: "11.00" }),
    );
    ids.learn(rec, ours);
    expect(ids.map("REAL000001")).toBe("SG00000009");
    expect(ids.map("REAL000001,OTHER00001")).toBe("SG00000009,OTHER00001");
    expect(ids.mapUrl("https://gw.example/pay/3ds/abcdef?x=1")).toBe("http://127.0.0.1:9/pay/3ds/zyxwvu?x=1");
    expect(ids.mapUrl("http://recorder:8090/pay/3ds/abcdef")).toBe("/pay/3ds/zyxwvu");
    // status codes and amounts are never ids: mapping "-1" or "10.00" would rewrite unrelated fields
    expect(ids.map("-1")).toBe("-1");
    expect(ids.map("10.00")).toBe("10.00");
  });
});

describe("prepareRequest: a recorded request as verify sends it", () => {
  const entry = (postData: HarEntry["request"]["postData"], url = "https://gw.example/v1/authorise"): HarEntry => ({
    startedDateTime: "2026-11-26T10:00:00Z",
    time: 1,
    request: { method: "POST", url, headers: [{ name: "Content-Type", value: postData?.mimeType ?? "" }], postData },
    response: { status: 200, headers: [], content: {} },
  });
  const ids = new IdMap();
  ids.learn(readTree("json", '{"transaction_id":"REAL-0000001"}'), readTree("json", '{"transaction_id":"SG-00000042"}'));
  const ctx = { ids, keyOf: () => "the_key", cardFor: cardResolver(["4000002760003184"]), notifyUrl: "http://127.0.0.1:9/n" };

  test("a masked test card becomes that card, a starred code digits, notify_url verify's receiver, ids Sandgate's; signed again", () => {
    const body = {
      merchant_id: "M1",
      account_id: "A1",
      order_no: "O-1",
      currency: "USD",
      amount: "1.00",
      card: "400000******3184",
      security_code: "***",
      notify_url: "https://shop.example/n",
      custom: "REAL-0000001",
      encryption_data: "0".repeat(64),
    };
    const sent = prepareRequest(entry({ mimeType: "application/json", text: JSON.stringify(body) }), ctx);
    const fields = JSON.parse(sent.body!) as Record<string, string>;
    expect(fields).toMatchObject({ card: "4000002760003184", security_code: "123", notify_url: "http://127.0.0.1:9/n", custom: "SG-00000042" });
    expect(fields.encryption_data).toBe(signRequest("authorise", fields, "the_key"));
    expect(sent.path).toBe("/v1/authorise");
  });

  test("a card no scenario names becomes a Luhn-valid number with the same first six and last four", () => {
    const card = cardResolver([])("411111******1111");
    expect(card).toMatch(/^411111\d{6}1111$/);
    expect(passesLuhn(card)).toBe(true);
  });

  test("a form exported as params (as browsers do) is sent as a form, its ids mapped", () => {
    const sent = prepareRequest(
      entry(
        {
          mimeType: "application/x-www-form-urlencoded",
          params: [
            { name: "merchant_id", value: "M1" },
            { name: "transaction_id", value: "REAL-0000001" },
          ],
        },
        "https://gw.example/v1/retrievalTrans",
      ),
      ctx,
    );
    expect(new URLSearchParams(sent.body).get("transaction_id")).toBe("SG-00000042");
  });
});

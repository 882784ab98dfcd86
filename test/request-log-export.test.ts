// The request log for testers: filtered by operation, HTTP status and time, and exported as HAR 1.2
// (browsers' dev tools and API clients open it) with each request's body and answer, card data masked.
import request from "supertest";
import { describe, expect, test } from "vitest";
import { harOf } from "../src/admin/har-export.js";
import { createRequestLog, type RequestLogEntry } from "../src/store/request-log.js";
import { ACME, directPayment, makeApp } from "./helpers.js";

async function traffic() {
  const made = await makeApp();
  const { app } = made;
  const paid = await request(app)
    .post("/v1/authorise")
    .send(directPayment({ order_no: "HAR-1" }));
  const bad = await request(app)
    .post("/v1/authorise")
    .send(directPayment({ order_no: "HAR-2", amount: "ten" }));
  const refused = await request(app)
    .post("/v1/retrievalTrans")
    .type("form")
    .send({ merchant_id: "M10002", account_id: "A20001", order_no: "ORD-2001", encryption_data: "a".repeat(64) });
  const captured = await request(app)
    .post("/v1/capture")
    .send({
      ...ACME,
      encryption_data: "a".repeat(64),
      capture_orders: [{ transaction_id: "1000000000001002", order_no: "ORD-1002", currency: "USD", amount: "75.50" }],
    });
  return { ...made, paid, bad, refused, captured };
}

type Logged = { id: string; operation: string; http_status: number; at: string; order_no: string };
const listed = async (app: Parameters<typeof request>[0], query: Record<string, string>) =>
  ((await request(app).get("/__sandbox/requests").query(query)).body as { requests: Logged[] }).requests;

describe("request log filters", () => {
  test("by operation, by HTTP status (exact or a class) and by time range", async () => {
    const { app, paid } = await traffic();
    expect((await listed(app, { operation: "authorise" })).map((r) => r.order_no)).toEqual(["HAR-1", "HAR-2"]);
    expect((await listed(app, { http_status: "4xx" })).map((r) => [r.operation, r.http_status])).toEqual([
      ["authorise", 400],
      ["retrievalTrans", 403],
    ]);
    expect((await listed(app, { http_status: "403" })).map((r) => r.operation)).toEqual(["retrievalTrans"]);
    expect((await listed(app, { http_status: "200", operation: "capture" })).length).toBe(1);
    const all = await listed(app, {});
    const first = all.find((r) => r.id === paid.headers["x-request-id"])!;
    expect(await listed(app, { since: "2000-01-01T00:00:00Z", until: first.at })).toEqual(all.filter((r) => r.at <= first.at));
    expect(await listed(app, { since: new Date(Date.parse(all.at(-1)!.at) + 1000).toISOString() })).toEqual([]);
  });

  test("a batch (capture, refund, cancel) is found by each order it names, as a payment's other requests are", async () => {
    const { app, captured } = await traffic();
    const ofOrder = await listed(app, { order_no: "ORD-1002" });
    expect(ofOrder.map((r) => r.id)).toEqual([captured.headers["x-request-id"]]);
    expect(ofOrder[0]!.order_no).toBe("ORD-1002");
    const paid = await request(app)
      .post("/v1/authorise")
      .send(directPayment({ order_no: "BATCH-2", amount: "10.00" }));
    const second = { transaction_id: /<transaction_id>([^<]+)</.exec(paid.text)![1]!, order_no: "BATCH-2", currency: "USD", amount: "10.00" };
    const batch = await request(app)
      .post("/v1/refund")
      .send({
        ...ACME,
        encryption_data: "a".repeat(64),
        refund_orders: [
          { transaction_id: "1000000000001002", order_no: "ORD-1002", currency: "USD", amount: "75.50", refund_amount: "1.00" },
          { ...second, refund_amount: "1.00" },
        ],
      });
    for (const orderNo of ["ORD-1002", "BATCH-2"]) expect((await listed(app, { order_no: orderNo })).map((r) => r.id)).toContain(batch.headers["x-request-id"]);
    const entry = (await listed(app, { operation: "refund" })).at(-1) as Logged & { order_nos?: string[] };
    expect([entry.order_no, entry.order_nos]).toEqual(["ORD-1002", ["ORD-1002", "BATCH-2"]]);
    expect(await listed(app, { order_no: "NOT-IN-IT" })).toEqual([]);
    // the payment's page lists it among the requests for its order
    const page = (await request(app).get(`/__sandbox/ui/transactions/${second.transaction_id}`).expect(200)).text;
    const requests = page.slice(page.indexOf("Requests for this order"));
    expect(requests).toContain("<td>authorise</td>");
    expect(requests).toContain("<td>refund</td>");
  });

  test("a time that is not one is refused in the operator API's error shape", async () => {
    const { app } = await makeApp();
    for (const path of ["/__sandbox/requests", "/__sandbox/requests.har"]) {
      const res = await request(app).get(path).query({ since: "yesterday" });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "invalid_query", message: expect.stringContaining("since must be an ISO date-time") });
    }
  });
});

describe("GET /__sandbox/requests.har", () => {
  test("is HAR 1.2: every request with its body (card masked), headers, status and the answer as sent", async () => {
    const { app, paid, captured } = await traffic();
    const res = await request(app).get("/__sandbox/requests.har");
    expect(res.status).toBe(200);
    expect(res.headers["content-disposition"]).toMatch(/attachment; filename="sandgate-requests\.har"/);
    type HarEntry = {
      startedDateTime: string;
      comment: string;
      timings: Record<string, number>;
      request: { postData: { mimeType: string; text: string } };
      response: { headers: { name: string; value: string }[]; content: { mimeType: string; text: string } };
    };
    const { log } = res.body as { log: { version: string; creator: { name: string; version: string }; entries: HarEntry[] } };
    expect(log.version).toBe("1.2");
    expect(log.creator).toEqual({ name: "Sandgate", version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(log.entries).toHaveLength(4);
    for (const e of log.entries) {
      // the fields HAR 1.2 requires of an entry
      expect(Object.keys(e)).toEqual(expect.arrayContaining(["startedDateTime", "time", "request", "response", "cache", "timings"]));
      expect(Number.isNaN(Date.parse(e.startedDateTime))).toBe(false);
      expect(e.request).toMatchObject({
        method: "POST",
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1\//),
        httpVersion: "HTTP/1.1",
        cookies: [],
        queryString: [],
        headersSize: -1,
      });
      expect(e.response).toMatchObject({ status: expect.any(Number), httpVersion: "HTTP/1.1", cookies: [], redirectURL: "", headersSize: -1 });
      expect(e.timings).toMatchObject({ send: expect.any(Number), wait: expect.any(Number), receive: expect.any(Number) });
    }
    const [pay, , , capture] = log.entries;
    expect(pay!.response.content.text).toBe(paid.text);
    expect(pay!.response.headers).toEqual(expect.arrayContaining([{ name: "x-request-id", value: paid.headers["x-request-id"] }]));
    const sent = JSON.parse(pay!.request.postData.text) as Record<string, string>;
    expect(sent).toMatchObject({ order_no: "HAR-1", card: "424242******4242", security_code: "***" });
    expect(pay!.request.postData.mimeType).toMatch(/^application\/json/);
    expect(capture!.response.content).toMatchObject({ mimeType: "application/json; charset=utf-8", text: captured.text });
    expect(capture!.comment).toMatch(/capture: 1 of 1 orders succeeded/);
    // no full card number anywhere in the file
    expect(res.text).not.toContain("4242424242424242");
  });

  test("takes the same filters as the log", async () => {
    const { app } = await traffic();
    const { log } = (await request(app).get("/__sandbox/requests.har").query({ operation: "retrievalTrans" })).body as {
      log: { entries: { response: { status: number }; request: { postData: { mimeType: string; text: string } } }[] };
    };
    expect(log.entries.map((e) => e.response.status)).toEqual([403]);
    expect(log.entries[0]!.request.postData.mimeType).toMatch(/^application\/x-www-form-urlencoded/);
    expect(log.entries[0]!.request.postData.text).toContain("merchant_id=M10002");
  });

  test("a body refused as unreadable shows as {}, whatever card data it held; a readable one as it was sent", async () => {
    const { app } = await makeApp();
    const card = "4242424242424242";
    await request(app).post("/v1/authorise").set("content-type", "application/json").send(`{"card":"${card}",`);
    await request(app)
      .post("/v1/authorise")
      .send(directPayment({ order_no: "CTRL-1", note: "a\u0001b" }));
    const notUtf8 = Buffer.concat([Buffer.from(`{"card":"${card}","note":"`), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    await request(app).post("/v1/authorise").set("content-type", "application/octet-stream").send(notUtf8);
    const form = new URLSearchParams({ ...(directPayment({ order_no: "FORM-1" }) as Record<string, string>) }).toString();
    await request(app).post("/v1/authorise").set("content-type", "application/x-www-form-urlencoded").send(form);
    const res = await request(app).get("/__sandbox/requests.har");
    const { log } = res.body as { log: { entries: { request: { postData: { text: string } } }[] } };
    const [malformed, control, undecodable, sent] = log.entries.map((e) => e.request.postData.text);
    expect(malformed).toBe("{}");
    expect(control).toBe("{}");
    // not UTF-8, sent as octet-stream: nothing of it shown (an empty form: its type is not JSON)
    expect(undecodable).toBe("");
    expect(new URLSearchParams(sent).get("order_no")).toBe("FORM-1");
    expect(new URLSearchParams(sent).get("card")).toBe("424242******4242");
    expect(res.text).not.toContain(card);
  });

  test("a request whose body the log no longer keeps is listed without it, and says which ones it keeps", () => {
    const log = createRequestLog(10, 2);
    const logged = (n: number): RequestLogEntry => ({
      id: `req-${n}`,
      at: new Date(n * 1000).toISOString(),
      operation: "authorise",
      path: "/v1/authorise",
      ip: "127.0.0.1",
      merchant_id: "M1",
      account_id: "A1",
      order_no: `O-${n}`,
      http_status: 200,
      result: "0000:Success",
      rule: "",
      signature: null,
    });
    const exchange = {
      method: "POST",
      url: "http://127.0.0.1/v1/authorise",
      requestHeaders: [],
      requestType: "application/json",
      body: "{}",
      status: 200,
      responseHeaders: [],
      responseType: "application/json",
      responseBody: '{"ok":1}',
      duration_ms: 1,
    };
    for (let n = 1; n <= 3; n++) log.add(logged(n), exchange);
    const har = harOf(log.list({}), (id) => log.exchange(id), "http://127.0.0.1", "1.0.0");
    const [first, , third] = har.log.entries;
    expect(first!.response.content).toEqual({
      size: 0,
      mimeType: "",
      text: "",
      comment: "bodies are kept for the 1,000 most recent requests (fewer when their bodies take more than 16 MB)",
    });
    expect(third!.response.content.text).toBe('{"ok":1}');
  });
});

describe("the HAR export masks as the log does", () => {
  test("a card and a code masked, a payout's bank account number that passes Luhn kept as sent", async () => {
    const { app } = await makeApp();
    await request(app)
      .post("/v1/payout")
      .send({
        merchant_id: "M10001",
        account_id: "A10001",
        request_id: "HAR-PAYOUT-1",
        encryption_data: "a".repeat(64),
        bank_details: { account_number: "4111111111111111" },
        card: "5105105105105100",
      });
    const har = (await request(app).get("/__sandbox/requests.har").expect(200)).body as { log: { entries: { request: { postData: { text: string } } }[] } };
    const sent = JSON.parse(har.log.entries.at(-1)!.request.postData.text) as { bank_details: { account_number: string }; card: string };
    expect(sent.bank_details.account_number).toBe("4111111111111111");
    expect(sent.card).toBe("510510******5100");
  });
});

describe("the request log in memory", () => {
  test("keeps each body with card numbers and codes masked, whatever their shape: nothing in this process's memory holds them", async () => {
    const { app, deps } = await makeApp();
    const CARD = "5105105105105100";
    const shapes: [string, string][] = [
      ["application/x-www-form-urlencoded", `merchant_id=M10001&account_id=A10001&order_no=MEM-1&card[]=${CARD}&security_code[]=8642`],
      ["application/x-www-form-urlencoded", `merchant_id=M10001&account_id=A10001&order_no=MEM-2&card[number]=${CARD}&security_code[x]=8642`],
      ["application/json", JSON.stringify({ merchant_id: "M10001", account_id: "A10001", order_no: "MEM-3", card: [CARD], security_code: { v: "8642" } })],
      ["application/json", JSON.stringify(directPayment({ order_no: "MEM-4", card: CARD, security_code: "8642", note: `card ${CARD}` }))],
      // names escaped, which the parsers decode: %63ard is card, \u0063vv is cvv
      ["application/x-www-form-urlencoded", `merchant_id=M10001&account_id=A10001&order_no=MEM-5&%63ard[]=${CARD}&%73ecurity_code=8642`],
      ["application/json", `{"merchant_id":"M10001","account_id":"A10001","order_no":"MEM-6","\\u0063ard":"${CARD}","\\u0063vv":"8642"}`],
    ];
    for (const [type, body] of shapes) await request(app).post("/v1/authorise").set("content-type", type).send(body);
    const entries = deps.requests.list({ limit: 100 });
    expect(entries.map((e) => e.order_no)).toEqual(expect.arrayContaining(["MEM-1", "MEM-2", "MEM-3", "MEM-4", "MEM-5", "MEM-6"]));
    const bodies = entries.map((e) => deps.requests.exchange(e.id)?.body ?? "").join("\n");
    expect(bodies).toContain("510510");
    expect(bodies).not.toContain(CARD);
    expect(bodies).not.toMatch(/8642/);
  });
});

// POST /__sandbox/verify: a recording (here Sandgate's own HAR export, the same shape as one of the
// real gateway) replayed against a fresh in-process Sandgate, never against the serving one: the
// report of `sandgate verify` as JSON, bad recordings refused with a message, 20 MB at most, and
// the ADMIN_TOKEN guard in front of it.
import request from "supertest";
import { describe, expect, test } from "vitest";
import type { App } from "../src/server/app.js";
import type { VerifyReport } from "../src/proof/verify.js";
import { ACME, ANY_SIGNATURE, directPayment, makeApp, parseXml, postAuthorise, snapshotState, textOf } from "./helpers.js";

interface Har {
  log: { entries: { request: { url: string }; response: { content: { text?: string } } }[]; comment?: string };
}

/** A recording made on a Sandgate of its own: an approved payment captured, a declined one, a lookup. */
async function recording(): Promise<Har> {
  const { app } = await makeApp();
  const approved = directPayment();
  const id = textOf(parseXml((await postAuthorise(app, approved).expect(200)).text).transaction_id);
  await request(app)
    .post("/v1/capture")
    .send({
      merchant_id: ACME.merchant_id,
      account_id: ACME.account_id,
      encryption_data: ANY_SIGNATURE,
      capture_orders: [{ transaction_id: id, order_no: approved.order_no, currency: "USD", amount: "10.00" }],
    })
    .expect(200);
  await postAuthorise(app, directPayment({ card: "4000000000000002" })).expect(200);
  const har = (await request(app).get("/__sandbox/requests.har").expect(200)).body as Har;
  expect(har.log.entries).toHaveLength(3);
  return har;
}

const verify = (app: App, body: string, contentType = "application/json") => request(app).post("/__sandbox/verify").set("Content-Type", contentType).send(body);

/** The recording with the first approval's answer turned into a decline text. */
function altered(har: Har): string {
  const text = JSON.stringify(har);
  expect(text).toContain("<result_info>0000:Success</result_info>");
  return text.replace("<result_info>0000:Success</result_info>", "<result_info>0116:Insufficient funds</result_info>");
}

describe("POST /__sandbox/verify", () => {
  test("a recording Sandgate answers alike: 200, every exchange replayed, no difference", async () => {
    const har = await recording();
    const { app } = await makeApp();
    const res = await verify(app, JSON.stringify(har)).expect(200);
    const report = res.body as VerifyReport;
    expect(res.type).toBe("application/json");
    expect(report.target).toBe("a fresh Sandgate");
    expect(report.differences).toEqual([]);
    expect(report.exchanges.map((x) => [x.exchange, x.operation, x.differences])).toEqual([
      [1, "authorise", 0],
      [2, "capture", 0],
      [3, "authorise", 0],
    ]);
    expect(report.notifications).toEqual({ recorded: 0, sent: 0, compared: false });
  });

  test("one altered answer: exactly that value difference at respon.result_info", async () => {
    const { app } = await makeApp();
    const report = (await verify(app, altered(await recording())).expect(200)).body as VerifyReport;
    expect(report.differences).toEqual([
      {
        exchange: 1,
        operation: "authorise",
        path: "respon.result_info",
        kind: "value",
        expected: "0116:Insufficient funds",
        actual: "0000:Success",
        note: "must agree: a result code or text",
      },
    ]);
    expect(report.exchanges.map((x) => x.differences)).toEqual([1, 0, 0]);
  });

  test("?ignore= leaves a path out; ?suggest=1 adds the rule that closes the difference", async () => {
    const { app } = await makeApp();
    const body = altered(await recording());
    const ignored = (await verify(app, body).query("ignore=risk_score&ignore=respon.result_info").expect(200)).body as VerifyReport;
    expect(ignored.differences).toEqual([]);
    const suggested = (await verify(app, body).query({ suggest: "1" }).expect(200)).body as VerifyReport;
    expect(suggested.suggestions?.closes.map((d) => d.path)).toEqual(["respon.result_info"]);
    expect(suggested.suggestions?.scenario.rules).toHaveLength(1);
    expect(suggested.suggestions?.scenario.rules[0]?.then).toMatchObject({ fields: { result_info: "0116:Insufficient funds" } });
    expect((await verify(app, body).expect(200)).body).not.toHaveProperty("suggestions");
  });

  test("the fresh Sandgate follows this server's current global scenario", async () => {
    const har = await recording();
    const { app } = await makeApp();
    await request(app).put("/__sandbox/scenarios/global").send({ name: "declines" }).expect(200);
    const report = (await verify(app, JSON.stringify(har)).expect(200)).body as VerifyReport;
    expect(report.differences.some((d) => d.exchange === 1 && d.path === "respon.order_status" && d.expected === "1" && d.actual === "0")).toBe(true);
  });

  test("a recording larger than the operator API's 100 kb JSON limit, sent with any content type, is read", async () => {
    const har = await recording();
    har.log.comment = "x".repeat(300_000);
    const { app } = await makeApp();
    expect(((await verify(app, JSON.stringify(har), "application/x-www-form-urlencoded").expect(200)).body as VerifyReport).differences).toEqual([]);
  });

  test("the serving sandbox's own state is not touched by a replay", async () => {
    const { app, deps } = await makeApp();
    await postAuthorise(app, directPayment({ order_no: "OWN-1" })).expect(200);
    const state = snapshotState(deps);
    const transactions = (await request(app).get("/__sandbox/transactions").expect(200)).body as unknown;
    const logged = deps.requests.list({ limit: 5000 }).length;
    const har = await recording();
    const report = (await verify(app, altered(har)).expect(200)).body as VerifyReport;
    expect(report.exchanges).toHaveLength(3);
    expect(snapshotState(deps)).toEqual(state);
    expect((await request(app).get("/__sandbox/transactions").expect(200)).body).toEqual(transactions);
    // the two replayed payments lived and died with the fresh Sandgate
    const replayedOrders = har.log.entries.map((e) => /<order_no>([^<]+)</.exec(e.response.content.text ?? "")?.[1]).filter((o) => o !== undefined);
    expect(replayedOrders).toHaveLength(2);
    expect(deps.store.data.transactions.filter((t) => replayedOrders.includes(t.order_no))).toEqual([]);
    expect(deps.requests.list({ limit: 5000 })).toHaveLength(logged);
  });
});

describe("bad recordings: 400 { error, message }, too large: 413", () => {
  const otherApi = {
    log: {
      version: "1.2",
      entries: [
        {
          startedDateTime: "2026-01-01T00:00:00Z",
          time: 1,
          request: { method: "GET", url: "https://api.example.com/users/1", headers: [] },
          response: { status: 200, headers: [], content: { mimeType: "application/json", text: "{}" } },
        },
      ],
    },
  };

  test.each([
    ["not JSON", "this is not a HAR", /not JSON/],
    ["empty", "", /it is empty/],
    ["JSON but not a HAR", JSON.stringify({ hello: "world" }), /not a HAR 1\.2 document: log/],
    ["a HAR of another API", JSON.stringify(otherApi), /another API/],
  ])("%s", async (_name, body, message) => {
    const { app } = await makeApp();
    const res = await verify(app, body).expect(400);
    expect(res.body).toEqual({ error: "invalid_har", message: expect.stringMatching(message) });
  });

  test("a recording cut off while it was written", async () => {
    const text = JSON.stringify(await recording());
    const { app } = await makeApp();
    const res = await verify(app, text.slice(0, Math.floor(text.length / 2))).expect(400);
    expect(res.body.error).toBe("invalid_har");
    expect(res.body.message).toMatch(/cut off/);
  });

  test("over 20 MB: 413", async () => {
    const { app } = await makeApp();
    const res = await verify(app, JSON.stringify({ log: { entries: [], comment: "x".repeat(21 * 1024 * 1024) } })).expect(413);
    expect(res.body).toEqual({ error: "body_too_large", message: expect.stringContaining("20 MB") });
  });
});

describe("with ADMIN_TOKEN", () => {
  test("refused without the token, answered with it", async () => {
    const body = JSON.stringify(await recording());
    const { app } = await makeApp({ adminToken: "verify-token" });
    const refused = await verify(app, body).expect(401);
    expect(refused.body.error).toBe("unauthorised");
    await verify(app, body).set("Authorization", "Bearer wrong-token").expect(401);
    const report = (await verify(app, body).set("Authorization", "Bearer verify-token").expect(200)).body as VerifyReport;
    expect(report.differences).toEqual([]);
  });
});

describe("the Verify tab", () => {
  test("an HTML page under the dashboard's CSP, loading its script from the assets; the tab in every page's nav", async () => {
    const { app } = await makeApp();
    const res = await request(app).get("/__sandbox/ui/verify").expect(200);
    expect(res.type).toBe("text/html");
    expect(res.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(res.text).toContain('<script src="/__sandbox/assets/verify.js" defer></script>');
    expect(res.text).not.toMatch(/<script>|style="/);
    expect(res.text).toContain('<a href="/__sandbox/ui/verify" class="current" data-tab="verify">Verify</a>');
    expect(res.text).toContain('<input type="file" id="verify-file"');
    expect(res.text).toContain('<strong id="kind-content_type">content_type</strong>');
    expect((await request(app).get("/__sandbox/").expect(200)).text).toContain('data-tab="verify"');
    await request(app)
      .get("/__sandbox/assets/verify.js")
      .expect(200)
      .expect("Content-Type", /javascript/);
  });

  test("with ADMIN_TOKEN an unsigned browser gets the sign-in form", async () => {
    const { app } = await makeApp({ adminToken: "verify-token" });
    expect((await request(app).get("/__sandbox/ui/verify").expect(401)).text).toContain('id="token"');
  });
});

// The operator API's own rules: the admin token, the clock, reset, unknown routes, bad bodies.
import request from "supertest";
import { describe, expect, test } from "vitest";
import { directPayment, makeApp, parseXml } from "./helpers.js";

describe("ADMIN_TOKEN", () => {
  test("guards everything but health; the right bearer token passes", async () => {
    const { app } = await makeApp({ adminToken: "s3cret-token" });
    expect((await request(app).get("/__sandbox/health")).status).toBe(200);
    const refused = await request(app).get("/__sandbox/transactions");
    expect(refused.status).toBe(401);
    expect(refused.body.message).toContain("Authorization: Bearer");
    expect((await request(app).get("/__sandbox/transactions").set("Authorization", "Bearer wrong-token!")).status).toBe(401);
    expect((await request(app).get("/__sandbox/transactions").set("Authorization", "Bearer s3cret-token")).status).toBe(200);
    // the gateway itself is not guarded
    expect((await request(app).post("/v1/authorise").send(directPayment())).status).toBe(200);
  });
});

describe("clock", () => {
  test.each([[{ advance: "-5s" }], [{ advance: "soon" }], [{ advance_seconds: -1 }], [{}]])("refuses %j with 400", async (body) => {
    const { app } = await makeApp();
    const res = await request(app).post("/__sandbox/clock").send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_advance");
  });

  test("advances only forward and reports the new time", async () => {
    const { app } = await makeApp();
    const before = Date.parse((await request(app).get("/__sandbox/clock")).body.now);
    const res = await request(app).post("/__sandbox/clock").send({ advance: "2h" });
    expect(res.body.offset_ms).toBe(7_200_000);
    expect(Date.parse(res.body.now) - before).toBeGreaterThanOrEqual(7_200_000);
  });
});

describe("reset", () => {
  test("one merchant's records go back to fixtures; the others' stay", async () => {
    const { app, deps } = await makeApp();
    const mine = parseXml((await request(app).post("/v1/authorise").send(directPayment())).text).transaction_id;
    const theirs = parseXml(
      (
        await request(app)
          .post("/v1/authorise")
          .send(directPayment({ merchant_id: "OTHER", account_id: "X" }))
      ).text,
    ).transaction_id;
    expect((await request(app).post("/__sandbox/reset").send({ merchant_id: "M10001" })).status).toBe(200);
    const ids = deps.store.data.transactions.map((t) => t.transaction_id);
    expect(ids).not.toContain(mine);
    expect(ids).toContain(theirs);
    expect(ids).toContain("1000000000001001");
    expect((await request(app).post("/__sandbox/reset").send({ all: true })).body).toEqual({ reset: "all" });
    expect(deps.store.data.transactions.map((t) => t.transaction_id)).not.toContain(theirs);
    expect(deps.store.data.merchants.map((m) => m.merchant_id)).toEqual(["M10001", "M10002"]);
  });
});

describe("a careless reset resets nothing", () => {
  // each of these once answered {"reset":"all"} and wiped every team's records
  test.each([
    ["curl -d's default form type", (r: request.Test) => r.type("form").send('{"merchant_id":"CI-JOB-1"}'), "malformed_body"],
    ["a form body", (r: request.Test) => r.type("form").send("merchant_id=CI-JOB-1"), "malformed_body"],
    ["a text/plain body", (r: request.Test) => r.set("content-type", "text/plain").send('{"merchant_id":"CI-JOB-1"}'), "malformed_body"],
    ["merchantId (a misspelt key)", (r: request.Test) => r.send({ merchantId: "CI-JOB-1" }), "unknown_field"],
    ['"merchant_id":""', (r: request.Test) => r.send({ merchant_id: "" }), "invalid_reset"],
    ["{}", (r: request.Test) => r.send({}), "invalid_reset"],
    ["no body", (r: request.Test) => r, "invalid_reset"],
    ['"all":false', (r: request.Test) => r.send({ all: false }), "invalid_reset"],
    ['"all":"yes"', (r: request.Test) => r.send({ all: "yes" }), "invalid_reset"],
    ["a merchant Sandgate does not know", (r: request.Test) => r.send({ merchant_id: "CI-JOB-NEVER-SEEN" }), "unknown_merchant"],
    ["both forms at once", (r: request.Test) => r.send({ all: true, merchant_id: "CI-JOB-1" }), "invalid_reset"],
    ["a JSON array", (r: request.Test) => r.send(["all"]), "malformed_body"],
    ["JSON that is not an object", (r: request.Test) => r.set("content-type", "application/json").send('"all"'), "malformed_body"],
  ])("%s: 400, the accepted forms named, every record kept", async (_name, send, error) => {
    const { app, deps } = await makeApp();
    const mine = parseXml(
      (
        await request(app)
          .post("/v1/authorise")
          .send(directPayment({ merchant_id: "CI-JOB-1", account_id: "X" }))
      ).text,
    ).transaction_id;
    const before = JSON.stringify(deps.store.data);
    const res = await send(request(app).post("/__sandbox/reset"));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
    expect(res.body.message).toMatch(
      error === "invalid_reset" || error === "unknown_merchant"
        ? /\{"merchant_id": "<id>"\}.*\{"all": true\}.*nothing was reset/
        : /JSON|accepts "merchant_id", "all"/,
    );
    expect(JSON.stringify(deps.store.data)).toBe(before);
    expect(deps.store.data.transactions.map((t) => t.transaction_id)).toContain(mine);
  });

  test("every operator call refuses a key it does not accept, and a call that takes no body refuses any key", async () => {
    const { app } = await makeApp();
    const unknown = [
      request(app).put("/__sandbox/scenarios/global").send({ name: "declines", merchant_id: "M10001" }),
      request(app).post("/__sandbox/clock").send({ advance: "3d", merchant: "M10001" }),
      request(app).post("/__sandbox/payments/1000000000001001/complete").send({ outcome: "paid", note: "x" }),
      request(app).post("/__sandbox/notifications/deliver").send({ merchant_id: "M10001" }),
      request(app).delete("/__sandbox/coverage").send({ merchant_id: "M10001" }),
      request(app).post("/__sandbox/scenarios/reload").send({ name: "x" }),
    ];
    for (const res of await Promise.all(unknown)) {
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toBe("unknown_field");
    }
    // the scenario and the clock did not move
    expect((await request(app).get("/__sandbox/health")).body.scenario).toBe("default");
    expect((await request(app).get("/__sandbox/clock")).body.offset_ms).toBe(0);
  });
});

describe("errors", () => {
  test("an unknown route, a malformed body and a body over 100 kB answer JSON errors, and change nothing", async () => {
    const { app } = await makeApp();
    const missing = await request(app).get("/__sandbox/nope");
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe("not_found");
    const bad = await request(app).post("/__sandbox/clock").set("content-type", "application/json").send("{oops");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("malformed_body");
    const huge = await request(app)
      .post("/__sandbox/clock")
      .set("content-type", "application/json")
      .send(JSON.stringify({ advance: "1h", pad: "x".repeat(200_000) }));
    expect(huge.status).toBe(413);
    expect(huge.body).toEqual({ error: "body_too_large", message: "an operator call's JSON body is 100 kB at most" });
    expect((await request(app).get("/__sandbox/clock")).body.offset_ms).toBe(0); // nothing moved
    const gateway404 = await request(app).post("/v1/nope").send({});
    expect(gateway404.status).toBe(404);
    expect(gateway404.body.return_message).toMatch(/^I0404:/);
  });
});

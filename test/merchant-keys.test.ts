// Keys that isolate: with --merchant-keys random a provisioned merchant's key is random, shown only
// to operators (the operator API, the dashboard, `sandgate ctl merchant key`), so with strict
// signatures one team cannot sign as another on a shared sandbox. sk_test_<id> stays the default.
import request from "supertest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runSandgate } from "../scripts/sandgate-process.js";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { directPayment, makeApp, parseXml, signRequest, textOf } from "./helpers.js";

/** A payment of `merchant` signed with `key`. */
function signed(merchant: string, key: string, order: string) {
  const body = directPayment({ merchant_id: merchant, account_id: "A1", order_no: order });
  return { ...body, encryption_data: signRequest("authorise", body, key) };
}

describe("--merchant-keys id (the default)", () => {
  test("a provisioned merchant's key is sk_test_<id>: PUT provisions and shows it, GET reads it, a payment signed with it passes strict mode", async () => {
    const { app } = await makeApp({ signatureMode: "strict" });
    const put = await request(app).put("/__sandbox/merchants/CI-JOB-1").expect(200);
    expect(put.body).toEqual({
      merchant: { merchant_id: "CI-JOB-1", name: expect.any(String), secret_key: "sk_test_CI-JOB-1", provisioned: true, accounts: [] },
      created: true,
    });
    expect((await request(app).get("/__sandbox/merchants/CI-JOB-1").expect(200)).body.merchant.secret_key).toBe("sk_test_CI-JOB-1");
    const paid = await request(app)
      .post("/v1/authorise")
      .send(signed("CI-JOB-1", "sk_test_CI-JOB-1", "KEY-1"))
      .expect(200);
    expect(textOf(parseXml(paid.text).result_info)).toBe("0000:Success");
    // the account the payment used is now listed; a fixture merchant shows its fixture key
    expect((await request(app).put("/__sandbox/merchants/CI-JOB-1").expect(200)).body).toMatchObject({
      created: false,
      merchant: { accounts: [{ account_id: "A1", capture_mode: "manual" }] },
    });
    expect((await request(app).get("/__sandbox/merchants/M10001").expect(200)).body.merchant).toMatchObject({
      secret_key: "acme_test_key_7f3a9c21",
      provisioned: false,
    });
    await request(app)
      .get("/__sandbox/merchants/NOBODY")
      .expect(404, /merchant_not_found/);
  });

  test("--strict-merchants: PUT provisions nothing", async () => {
    const { app, deps } = await makeApp({ strictMerchants: true });
    expect((await request(app).put("/__sandbox/merchants/CI-JOB-2")).status).toBe(404);
    expect(deps.store.records.merchant("CI-JOB-2")).toBeUndefined();
  });
});

describe("--merchant-keys random", () => {
  test("a provisioned merchant's key is random: sk_test_<id> is refused in strict mode, its own key passes, another team's key does not", async () => {
    const { app } = await makeApp({ signatureMode: "strict", merchantKeys: "random" });
    const a = (await request(app).put("/__sandbox/merchants/TEAM-A").expect(200)).body.merchant.secret_key as string;
    const b = (await request(app).put("/__sandbox/merchants/TEAM-B").expect(200)).body.merchant.secret_key as string;
    expect(a).toMatch(/^sk_test_[0-9a-f]{32}$/);
    expect(b).toMatch(/^sk_test_[0-9a-f]{32}$/);
    expect(a).not.toBe(b);
    // asked again, the same key
    expect((await request(app).put("/__sandbox/merchants/TEAM-A").expect(200)).body).toMatchObject({ created: false, merchant: { secret_key: a } });
    for (const [key, order] of [
      ["sk_test_TEAM-A", "RND-1"],
      [b, "RND-2"],
    ] as const) {
      const refused = await request(app)
        .post("/v1/authorise")
        .send(signed("TEAM-A", key, order))
        .expect(400);
      expect(textOf(parseXml(refused.text).result_info)).toMatch(/^I0014:encryption_data does not match/);
    }
    const ok = await request(app)
      .post("/v1/authorise")
      .send(signed("TEAM-A", a, "RND-3"))
      .expect(200);
    expect(textOf(parseXml(ok.text).result_info)).toBe("0000:Success");
    // in strict mode a first request cannot be signed (its key is not known yet): refused, it provisions nothing
    await request(app)
      .post("/v1/authorise")
      .send(signed("TEAM-C", "sk_test_TEAM-C", "RND-4"))
      .expect(400);
    await request(app).get("/__sandbox/merchants/TEAM-C").expect(404);
    // the dashboard lists every merchant's key
    const page = (await request(app).get("/__sandbox/").expect(200)).text;
    for (const key of [a, b, "acme_test_key_7f3a9c21"]) expect(page).toContain(key);
  });

  test("in lenient mode a merchant provisioned by its first request gets a random key too, shown to operators", async () => {
    const { app } = await makeApp({ merchantKeys: "random" });
    await request(app)
      .post("/v1/authorise")
      .send(signed("TEAM-E", "anything", "RND-5"))
      .expect(200);
    expect((await request(app).get("/__sandbox/merchants/TEAM-E").expect(200)).body.merchant.secret_key).toMatch(/^sk_test_[0-9a-f]{32}$/);
  });

  test("behind ADMIN_TOKEN: a key is shown to the token only", async () => {
    const { app } = await makeApp({ merchantKeys: "random", adminToken: "an-admin-token-of-some-length" });
    await request(app).put("/__sandbox/merchants/TEAM-D").expect(401);
    const shown = await request(app).put("/__sandbox/merchants/TEAM-D").set("authorization", "Bearer an-admin-token-of-some-length").expect(200);
    expect(shown.body.merchant.secret_key).toMatch(/^sk_test_[0-9a-f]{32}$/);
    const page = await request(app).get("/__sandbox/").expect(401);
    expect(page.text).not.toContain(shown.body.merchant.secret_key);
  });

  describe("sandgate ctl merchant key", () => {
    let sandbox: Sandbox;
    beforeAll(async () => {
      sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", merchantKeys: "random", signatureMode: "strict" });
    });
    afterAll(() => sandbox.close());

    test("prints the key (provisioning the merchant), the one a payment then signs with", async () => {
      const run = await runSandgate(["ctl", "merchant", "key", "CI-JOB-9", "--url", sandbox.url], { env: { ADMIN_TOKEN: "", SANDGATE_URL: "" } });
      expect(run.code).toBe(0);
      const key = run.stdout.trim();
      expect(key).toMatch(/^sk_test_[0-9a-f]{32}$/);
      const res = await fetch(`${sandbox.url}/v1/authorise`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(signed("CI-JOB-9", key, "CTL-1")),
      });
      expect(res.status).toBe(200);
      const again = await runSandgate(["ctl", "merchant", "key", "CI-JOB-9", "--url", sandbox.url, "--json"], { env: { ADMIN_TOKEN: "", SANDGATE_URL: "" } });
      expect(JSON.parse(again.stdout)).toMatchObject({ merchant_id: "CI-JOB-9", secret_key: key, accounts: [{ account_id: "A1" }] });
    });

    test("--rotate prints a new key; a payment signed with the old one is refused at once", async () => {
      const env = { env: { ADMIN_TOKEN: "", SANDGATE_URL: "" } };
      const old = (await runSandgate(["ctl", "merchant", "key", "CI-JOB-10", "--url", sandbox.url], env)).stdout.trim();
      const run = await runSandgate(["ctl", "merchant", "key", "CI-JOB-10", "--rotate", "--url", sandbox.url], env);
      expect(run.code, run.stderr).toBe(0);
      const key = run.stdout.trim();
      expect(key).toMatch(/^sk_test_[0-9a-f]{32}$/);
      expect(key).not.toBe(old);
      const pay = (k: string, order: string) =>
        fetch(`${sandbox.url}/v1/authorise`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(signed("CI-JOB-10", k, order)),
        });
      expect((await pay(old, "CTL-2")).status).toBe(400);
      expect((await pay(key, "CTL-3")).status).toBe(200);
      // a merchant Sandgate does not know is not provisioned by a rotation
      const unknown = await runSandgate(["ctl", "merchant", "key", "CI-JOB-NONE", "--rotate", "--url", sandbox.url], env);
      expect(unknown.code).toBe(3);
      expect(unknown.stderr).toContain("merchant_not_found");
    });
  });
});

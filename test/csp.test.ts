// Every HTML answer carries a Content-Security-Policy: the gateway's own pages (the checkout's loading
// page, an HTML refusal), the payer pages and their problem pages, the dashboard (every page reached
// by walking its links, its confirmation and refusal pages), the sign-in page. No policy allows an
// inline script by 'unsafe-inline'; the gateway's loading page allows its one script by hash.
import request from "supertest";
import { describe, expect, test } from "vitest";
import type { App } from "../src/server/app.js";
import { ACME, ANY_SIGNATURE, apmPayment, directPayment, makeApp, parseXml, postAuthorise, textOf } from "./helpers.js";

type Answer = { status: number; headers: Record<string, string>; text: string };

/** Asserts `res` (an HTML answer) has a policy that allows no foreign or inline script. */
function expectPolicy(where: string, res: Answer): void {
  expect(res.headers["content-type"], where).toMatch(/^text\/html/);
  const csp = res.headers["content-security-policy"];
  expect(csp, `${where}: no Content-Security-Policy`).toBeDefined();
  expect(csp, where).toMatch(/(^|; )default-src 'none'/);
  expect(csp, where).not.toContain("unsafe-inline");
  expect(csp, where).not.toContain("unsafe-eval");
  expect(csp, where).toMatch(/base-uri 'none'/);
  expect(res.headers["x-content-type-options"], where).toBe("nosniff");
}

/** Every dashboard page reachable from /__sandbox/ by GET links (same origin, /__sandbox/...), each checked. */
async function walkDashboard(app: App, cookie = ""): Promise<string[]> {
  const seen = new Set<string>();
  const queue = ["/__sandbox/"];
  while (queue.length && seen.size < 300) {
    const path = queue.shift()!;
    if (seen.has(path)) continue;
    seen.add(path);
    const res = await request(app).get(path).set("cookie", cookie).set("accept", "text/html");
    if (!/^text\/html/.test(res.headers["content-type"] ?? "")) continue;
    expectPolicy(`GET ${path}`, res);
    // the dashboard's own policy: no framing, forms post only to it
    expect(res.headers["content-security-policy"], path).toMatch(/frame-ancestors 'none'/);
    for (const m of res.text.matchAll(/href="(\/__sandbox\/[^"#]*)"/g)) {
      const link = m[1]!.replace(/&amp;/g, "&");
      if (!link.startsWith("/__sandbox/assets") && !link.endsWith(".har") && !link.endsWith(".json") && !seen.has(link)) queue.push(link);
    }
  }
  return [...seen];
}

describe("Content-Security-Policy on every HTML answer", () => {
  test("the gateway's HTML answers: the checkout's loading page and an HTML refusal", async () => {
    const { app } = await makeApp();
    const ok = await request(app)
      .post("/v1/checkout")
      .send({ merchant_id: ACME.merchant_id, account_id: ACME.account_id, order_no: "CSP-1", currency: "EUR", amount: "1.00", encryption_data: ANY_SIGNATURE });
    expect(ok.status).toBe(200);
    expectPolicy("the loading page", ok);
    expect(ok.headers["content-security-policy"]).toMatch(/script-src 'sha256-/);
    const refused = await request(app).post("/v1/checkout").send({ merchant_id: ACME.merchant_id });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expectPolicy("an HTML refusal", refused);
    expect(refused.headers["content-security-policy"]).not.toContain("script-src 'self'");
  });

  test("payer pages: hosted checkout, 3-D Secure, APM, a page that does not exist, a refused post", async () => {
    const { app } = await makeApp();
    const pages: string[] = [];
    const threeds = parseXml((await postAuthorise(app, directPayment({ card: "4000002760003184" })).expect(200)).text);
    pages.push(new URL(textOf(threeds.issuer_url)).pathname);
    const apm = parseXml((await postAuthorise(app, apmPayment()).expect(200)).text);
    pages.push(new URL(textOf(apm.issuer_url)).pathname);
    const loading = (
      await request(app).post("/v1/checkout").send({
        merchant_id: ACME.merchant_id,
        account_id: ACME.account_id,
        order_no: "CSP-2",
        currency: "EUR",
        amount: "1.00",
        encryption_data: ANY_SIGNATURE,
      })
    ).text;
    const hosted = /action="([^"]+)"/.exec(loading)![1]!.replace(/&amp;/g, "&");
    const checkoutPage = await request(app).post(new URL(hosted).pathname).type("form").send({ orderNo: "CSP-2" });
    expectPolicy("the hosted checkout", checkoutPage);
    for (const path of pages) {
      expect(path).toMatch(/^\/pay\//);
      expectPolicy(`GET ${path}`, await request(app).get(path).expect(200));
    }
    expectPolicy("a payer page that does not exist", await request(app).get("/pay/apm/ffffffffffffffffffffffff").expect(404));
    expectPolicy("a refused payer post", await request(app).post(pages[0]!).type("form").send({ nonsense: "1" }));
  });

  test("the dashboard: every page its links reach, a confirmation page, a refusal page; the sign-in page", async () => {
    const { app } = await makeApp();
    await postAuthorise(app, directPayment()).expect(200);
    const walked = await walkDashboard(app);
    expect(walked.length).toBeGreaterThan(20);
    for (const tab of [
      "/__sandbox/",
      "/__sandbox/ui/transactions",
      "/__sandbox/ui/requests",
      "/__sandbox/ui/notifications",
      "/__sandbox/ui/coverage",
      "/__sandbox/ui/verify",
      "/__sandbox/ui/playground",
      "/__sandbox/ui/payouts",
      "/__sandbox/ui/subscriptions",
    ]) {
      expect(walked, tab).toContain(tab);
    }
    expect(walked.some((p) => /^\/__sandbox\/ui\/transactions\/\d+/.test(p))).toBe(true);
    // a form post that did not come from the dashboard: the refusal page
    expectPolicy("a refused form", await request(app).post("/__sandbox/ui/reset").type("form").send({ confirm: "yes" }).expect(403));
    // an answer Express makes itself (a redirect) carries a policy too
    const redirected = await request(app).get("/__sandbox/login").set("accept", "text/html");
    expect(redirected.status).toBe(303);
    expect(redirected.headers["content-security-policy"]).toMatch(/default-src 'none'/);
    const guarded = (await makeApp({ adminToken: "a-long-enough-admin-token" })).app;
    expectPolicy("the sign-in page", await request(guarded).get("/__sandbox/").expect(401));
  });
});

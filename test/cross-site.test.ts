// A shared sandbox is reached by many people's browsers: a page on another site must not act on
// /__sandbox through them (issue 27). Over HTTP, as a browser would send it: refused (403 in the
// surface's format) and nothing changes; scripts and CLIs, which send no Origin, act as before; a
// dashboard form acts only with its form token; the dashboard cannot be framed, payer pages can.
import request from "supertest";
import { beforeEach, describe, expect, test } from "vitest";
import type { App } from "../src/server/app.js";
import { apmPayment, formSession, makeApp, parseXml, postAuthorise, textOf } from "./helpers.js";

let app: App;
beforeEach(async () => {
  ({ app } = await makeApp());
});

/** What a cross-site request could change, as the operator API reports it. */
async function settings() {
  const scenarios = (await request(app).get("/__sandbox/scenarios").expect(200)).body as { global: string; bindings: Record<string, string> };
  const clock = (await request(app).get("/__sandbox/clock").expect(200)).body as { offset_ms: number };
  const transactions = ((await request(app).get("/__sandbox/transactions").expect(200)).body as { transactions: unknown[] }).transactions.length;
  return { global: scenarios.global, bindings: scenarios.bindings, offset: clock.offset_ms, transactions };
}

const FROM_ANOTHER_SITE: [string, Record<string, string>][] = [
  ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site", origin: "https://evil.example" }],
  ["Sec-Fetch-Site: same-site (another port of this host)", { "sec-fetch-site": "same-site", origin: "http://127.0.0.1:1" }],
  ["an Origin of another site, no Sec-Fetch-Site", { origin: "http://evil.example" }],
  ["Origin: null (a sandboxed frame, a file)", { origin: "null" }],
];

describe("state changes from another site", () => {
  test.each(FROM_ANOTHER_SITE)("JSON API, %s: 403 JSON, nothing changes", async (_name, headers) => {
    await postAuthorise(app, { ...apmPayment() }).expect(200);
    const before = await settings();
    for (const [method, path, body] of [
      ["put", "/__sandbox/scenarios/global", { name: "declines" }],
      ["put", "/__sandbox/scenarios/bindings/M10001", { name: "3ds" }],
      ["post", "/__sandbox/clock", { advance: "2d" }],
      ["post", "/__sandbox/reset", {}],
    ] as const) {
      const res = await request(app)[method](path).set(headers).send(body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body).toMatchObject({ error: "cross_site_refused", message: expect.stringContaining("another") });
    }
    expect(await settings()).toEqual(before);
  });

  test.each(FROM_ANOTHER_SITE)("dashboard form, %s: a 403 page, even with a valid form token", async (_name, headers) => {
    const session = await formSession(app);
    const res = await request(app)
      .post("/__sandbox/ui/scenarios/global")
      .set({ ...headers, cookie: session.cookie })
      .type("form")
      .send({ name: "declines", _form: session.token });
    expect(res.status).toBe(403);
    expect(res.type).toBe("text/html");
    expect(res.text).toContain("Refused: another site");
    expect((await settings()).global).toBe("default");
  });

  test("the dashboard's own pages (same-origin) and clients that are not browsers act as before", async () => {
    const session = await formSession(app);
    await request(app)
      .post("/__sandbox/ui/scenarios/global")
      .set({ "sec-fetch-site": "same-origin", origin: "http://127.0.0.1", cookie: session.cookie })
      .type("form")
      .send({ name: "declines", _form: session.token })
      .expect(303);
    expect((await settings()).global).toBe("declines");
    // curl, a CI script, the typed client: no Origin, no Sec-Fetch-Site
    await request(app).put("/__sandbox/scenarios/global").send({ name: "3ds" }).expect(200);
    await request(app).post("/__sandbox/clock").send({ advance: "1h" }).expect(200);
    expect(await settings()).toMatchObject({ global: "3ds", offset: 3_600_000 });
    // the gateway's own operations are not the operator API's: a merchant's page may post to them
    const paid = await postAuthorise(app, apmPayment()).set("origin", "https://shop.example").expect(200);
    expect(textOf(parseXml(paid.text).issuer_url)).toContain("/pay/apm/");
  });
});

describe("the dashboard's form token", () => {
  test("a form post without it, or with another browser's, is refused and changes nothing", async () => {
    const mine = await formSession(app);
    const theirs = await formSession(app);
    expect(theirs.token).not.toBe(mine.token);
    for (const [cookie, token] of [
      [undefined, undefined],
      [mine.cookie, undefined],
      [mine.cookie, theirs.token],
      [undefined, mine.token],
    ] as const) {
      const post = request(app).post("/__sandbox/ui/reset").type("form");
      if (cookie) post.set("cookie", cookie);
      const res = await post.send({ merchant_id: "", confirm: "yes", ...(token ? { _form: token } : {}) });
      expect(res.status).toBe(403);
      expect(res.text).toContain("form token");
    }
    await postAuthorise(app, apmPayment()).expect(200);
    const before = (await settings()).transactions;
    await request(app).post("/__sandbox/ui/clock").set("cookie", mine.cookie).type("form").send({ advance: "2d", _form: theirs.token }).expect(403);
    expect(await settings()).toMatchObject({ offset: 0, transactions: before });
  });

  test("every form on a dashboard page carries the browser's token, kept across pages in a SameSite=Strict cookie", async () => {
    const first = await request(app).get("/__sandbox/").expect(200);
    const cookie = (first.headers["set-cookie"] as unknown as string[]).find((c) => c.startsWith("sandgate_form="))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const forms = first.text.match(/<form method="post"[^>]*>/g) ?? [];
    expect(forms.length).toBeGreaterThan(3);
    const token = cookie.split(";")[0]!.split("=")[1]!;
    expect(first.text.split(`name="_form" value="${token}"`).length - 1).toBe(forms.length);
    // the next page keeps the same token (no new cookie)
    const next = await request(app).get("/__sandbox/ui/payouts").set("cookie", cookie.split(";")[0]!).expect(200);
    expect(next.headers["set-cookie"]).toBeUndefined();
  });
});

describe("framing", () => {
  test("the dashboard may not be framed and its forms post only to it; payer pages stay embeddable", async () => {
    for (const path of ["/__sandbox/", "/__sandbox/ui/transactions", "/__sandbox/ui/verify"]) {
      const csp = (await request(app).get(path).expect(200)).headers["content-security-policy"] as string;
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("form-action 'self'");
    }
    const apm = parseXml((await postAuthorise(app, apmPayment()).expect(200)).text);
    const pageUrl = new URL(textOf(apm.issuer_url));
    const page = await request(app).get(pageUrl.pathname).expect(200);
    expect(page.headers["content-security-policy"]).not.toContain("frame-ancestors");
  });
});

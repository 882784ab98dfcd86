// The QA dashboard over HTTP: every page answers with its CSP, every form acts through the same
// operator actions as the JSON API and comes back (303) with a message, hostile values stay text,
// a redirect never leaves the dashboard, and ADMIN_TOKEN asks a browser to sign in.
import request from "supertest";
import { beforeEach, describe, expect, test } from "vitest";
import type { App } from "../src/server/app.js";
import type { Deps } from "../src/deps/deps.js";
import { ACME, ANY_SIGNATURE, apmPayment, directPayment, formSession, makeApp, parseXml, postAuthorise, textOf } from "./helpers.js";

let app: App;
let deps: Deps;
let session: { cookie: string; token: string };
beforeEach(async () => {
  ({ app, deps } = await makeApp());
  session = await formSession(app);
});

/** A dashboard form posted as the browser would: with its form token. */
const form = (path: string, fields: Record<string, string>) =>
  request(app)
    .post(`/__sandbox${path}`)
    .set("cookie", session.cookie)
    .type("form")
    .send({ ...fields, _form: session.token });
const flashOf = (location: string | undefined) => Object.fromEntries(new URL(location ?? "", "http://x").searchParams);

async function pay(overrides: Record<string, unknown>) {
  const res = await postAuthorise(app, directPayment(overrides)).expect(200);
  return textOf(parseXml(res.text).transaction_id);
}

describe("pages", () => {
  test.each(["/", "/ui/transactions", "/ui/requests", "/ui/notifications", "/ui/payouts", "/ui/subscriptions", "/ui/scenarios/default"])(
    "%s is an HTML page with a CSP",
    async (path) => {
      const res = await request(app).get(`/__sandbox${path}`).expect(200);
      expect(res.type).toBe("text/html");
      expect(res.headers["content-security-policy"]).toContain("script-src 'self'");
      expect(res.text).toContain('<nav class="tabs">');
    },
  );

  test("a scenario's rules read as when → then, inherited rules named by their scenario", async () => {
    const res = await request(app).get("/__sandbox/ui/scenarios/3ds").expect(200);
    expect(res.text).toContain("<code>mastercard-frictionless</code>");
    expect(res.text).toContain("<code>default/decline-generic</code>");
    expect(res.text).toContain("<code>outcome</code>: threeds_required");
    await request(app)
      .get("/__sandbox/ui/scenarios/%3Cb%3E")
      .expect(404, /No scenario &quot;&lt;b&gt;&quot;/);
  });

  test("transactions: newest first, filtered by merchant, order_no and status", async () => {
    const first = await pay({ order_no: "DASH-1" });
    const second = await pay({ order_no: "DASH-2", card: "4000000000000002" });
    const all = (await request(app).get("/__sandbox/ui/transactions").query({ merchant_id: ACME.merchant_id }).expect(200)).text;
    expect(all.indexOf(second)).toBeLessThan(all.indexOf(first));
    const declined = (await request(app).get("/__sandbox/ui/transactions").query({ status: "declined", order_no: "DASH-2" }).expect(200)).text;
    expect(declined).toContain(second);
    expect(declined).not.toContain(first);
    expect((await request(app).get("/__sandbox/ui/transactions").query({ status: "6000", order_no: "DASH-1" }).expect(200)).text).not.toContain(first);
  });

  test("a transaction's page shows its history with rules, refunds and requests", async () => {
    const id = await pay({ order_no: "DASH-H" });
    await request(app)
      .post("/v1/capture")
      .send({
        merchant_id: ACME.merchant_id,
        account_id: ACME.account_id,
        encryption_data: ANY_SIGNATURE,
        capture_orders: [{ transaction_id: id, order_no: "DASH-H", currency: "USD", amount: "10.00" }],
      })
      .expect(200);
    await request(app)
      .post("/v1/refund")
      .send({
        merchant_id: ACME.merchant_id,
        account_id: ACME.account_id,
        encryption_data: ANY_SIGNATURE,
        refund_orders: [{ transaction_id: id, order_no: "DASH-H", currency: "USD", amount: "10.00", refund_amount: "4.00" }],
      })
      .expect(200);
    const page = (await request(app).get(`/__sandbox/ui/transactions/${id}`).expect(200)).text;
    expect(page).toContain("<code>default/visa-approve</code>");
    expect(page).toContain(`refund ${id}-01`);
    expect(page).toContain(`data-action="settle-processed-${id}-01"`);
    expect(page).toMatch(/<td>authorise<\/td>/);
    expect(page).toContain("<dt>Kind</dt><dd>direct (card)</dd>");
    // a fixture payment names no method: its kind alone
    expect((await request(app).get("/__sandbox/ui/transactions/1000000000001002").expect(200)).text).toContain("<dt>Kind</dt><dd>direct</dd>");
    await request(app).get("/__sandbox/ui/transactions/nope").expect(404);
  });

  test("coverage: a summary on top (rules answered and outcomes produced, of their totals, per merchant); rules never answered folded", async () => {
    await pay({ merchant_id: "COV-A", account_id: "A1" });
    await pay({ merchant_id: "COV-A", account_id: "A1", card: "4000000000000002" });
    await pay({ merchant_id: "COV-B", account_id: "A1" });
    const page = (await request(app).get("/__sandbox/ui/coverage").expect(200)).text;
    const summary = page.slice(page.indexOf('id="coverage-summary"'), page.indexOf("</section>", page.indexOf('id="coverage-summary"')));
    const rules = (n: number) => new RegExp(`<strong>[\\d.]+%</strong> <span class="hint">\\(${n} of \\d+\\)</span>`);
    expect(summary).toContain("all merchants");
    expect(summary).toMatch(/<code>COV-A<\/code><\/a><\/td><td><strong>[\d.]+%<\/strong> <span class="hint">\(2 of \d+\)/);
    expect(summary).toMatch(/<code>COV-B<\/code><\/a><\/td><td><strong>[\d.]+%<\/strong> <span class="hint">\(1 of \d+\)/);
    expect(summary).toMatch(rules(2));
    expect(page).toMatch(/<details class="never"><summary>\d+ rules never answered<\/summary>/);
    const one = (await request(app).get("/__sandbox/ui/coverage?merchant_id=COV-B").expect(200)).text;
    expect(one).toContain("merchant <code>COV-B</code>");
  });

  test("words a tester reads: a rule-less answer is the scenario's default answer, counts in the right number", async () => {
    const query = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, order_no: "ORD-1002", encryption_data: ANY_SIGNATURE };
    const res = await request(app).post("/v1/retrievalTrans").send(query).expect(200);
    expect(res.get("X-Sandbox-Rule")).toBe("default/(no rule)"); // the header keeps its token
    const page = (await request(app).get("/__sandbox/ui/requests").expect(200)).text;
    expect(page).toContain("<code>default answer (scenario default)</code>");
    expect(page).not.toContain("(no rule)");
    expect(flashOf((await form("/ui/clock", { advance: "1s" }).expect(303)).headers.location).ok).toMatch(/; 0 changes fell due\.$/);
  });

  test("a message carried back is shown as text", async () => {
    const res = await request(app).get("/__sandbox/").query({ error: "<script>alert(1)</script>" }).expect(200);
    expect(res.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(res.text).not.toContain("<script>alert");
  });
});

describe("actions", () => {
  test("global scenario and bindings: set, bind, change, remove; an unknown name changes nothing", async () => {
    expect(flashOf((await form("/ui/scenarios/global", { name: "declines" }).expect(303)).headers.location)).toEqual({
      ok: "Global scenario is now declines.",
    });
    expect(deps.scenarios.global()).toBe("declines");
    expect(flashOf((await form("/ui/scenarios/global", { name: "nope" }).expect(303)).headers.location).error).toContain("Unknown scenario");
    expect(deps.scenarios.global()).toBe("declines");
    await form("/ui/scenarios/bind", { merchant_id: "M-QA", name: "3ds" }).expect(303);
    expect(deps.scenarios.bindings()).toEqual({ "M-QA": "3ds" });
    expect((await request(app).get("/__sandbox/").expect(200)).text).toContain('data-action="unbind-M-QA"');
    await form("/ui/scenarios/bind", { merchant_id: "M-QA", name: "risk-review" }).expect(303);
    expect(deps.scenarios.bindings()).toEqual({ "M-QA": "risk-review" });
    await form("/ui/scenarios/unbind", { merchant_id: "M-QA" }).expect(303);
    expect(deps.scenarios.bindings()).toEqual({});
    expect(flashOf((await form("/ui/scenarios/bind", { merchant_id: " ", name: "3ds" }).expect(303)).headers.location).error).toBeDefined();
  });

  test("clock: advance by a duration; a bad one is refused", async () => {
    const before = deps.clock.now().getTime();
    await form("/ui/clock", { advance: "2d" }).expect(303);
    expect(deps.clock.now().getTime() - before).toBeGreaterThanOrEqual(2 * 86_400_000);
    expect(flashOf((await form("/ui/clock", { advance: "soon" }).expect(303)).headers.location).error).toContain("advance");
  });

  test("reset asks for confirmation first, then resets one merchant", async () => {
    await pay({ merchant_id: "M-RESET", order_no: "R-1" });
    const ask = await form("/ui/reset", { merchant_id: "M-RESET" }).expect(200);
    expect(ask.text).toContain("Yes, reset merchant M-RESET");
    expect(deps.store.data.transactions.some((t) => t.merchant_id === "M-RESET")).toBe(true);
    await form("/ui/reset", { merchant_id: "M-RESET", confirm: "yes" }).expect(303);
    expect(deps.store.data.transactions.some((t) => t.merchant_id === "M-RESET")).toBe(false);
  });

  test("complete a pending payment, settle a refund, settle payouts, charge a subscription, resend a notification", async () => {
    const apm = apmPayment({ notify_url: "http://127.0.0.1:9/hook" });
    await postAuthorise(app, apm).expect(200);
    const tx = deps.store.data.transactions.find((t) => t.order_no === apm.order_no)!;
    const done = await form(`/ui/payments/${tx.transaction_id}/complete`, { outcome: "paid", back: `/__sandbox/ui/transactions/${tx.transaction_id}` }).expect(
      303,
    );
    expect(done.headers.location).toMatch(new RegExp(`^/__sandbox/ui/transactions/${tx.transaction_id}\\?ok=`));
    expect(tx.state).toBe("paid");
    expect(flashOf((await form(`/ui/payments/${tx.transaction_id}/complete`, { outcome: "paid" }).expect(303)).headers.location).error).toContain(
      "only a pending payment",
    );

    await request(app)
      .post("/v1/refund")
      .send({
        merchant_id: ACME.merchant_id,
        account_id: "A10002",
        encryption_data: ANY_SIGNATURE,
        refund_orders: [{ transaction_id: tx.transaction_id, order_no: tx.order_no, currency: "BRL", amount: "25.00", refund_amount: "5.00" }],
      })
      .expect(200);
    await form(`/ui/refunds/${tx.transaction_id}-01/settle`, { result: "failed" }).expect(303);
    expect(deps.store.data.refunds.find((r) => r.refund_reference_id === `${tx.transaction_id}-01`)?.state).toBe("failed");

    const payout = async (suffix: string) =>
      (
        await request(app)
          .post("/v1/payout")
          .send({
            merchant_id: ACME.merchant_id,
            account_id: ACME.account_id,
            request_id: `7a1c2a9e-8b7d-4c6e-9a5b-00000000000${suffix}`,
            payment_currency: "USD",
            payment_amount: "10.00",
            payment_method: "SWIFT",
            beneficiary: { first_name: "A", last_name: "B", bank_details: { account_number: "12340008", bank_country_code: "US" } },
            encryption_data: ANY_SIGNATURE,
          })
          .expect(200)
      ).body.transaction_id as string;
    const [p1, p2] = [await payout("1"), await payout("2")];
    await form(`/ui/payouts/${p1}/complete`, {}).expect(303);
    await form(`/ui/payouts/${p2}/fail`, { failure_type: "NAME_MISMATCH" }).expect(303);
    expect(deps.store.data.payouts.map((p) => [p.status, p.failure_type])).toEqual([
      ["COMPLETED", ""],
      ["FAILED", "NAME_MISMATCH"],
    ]);
    expect((await request(app).get("/__sandbox/ui/payouts").expect(200)).text).toContain("NAME_MISMATCH");

    const sub = deps.store.data.subscriptions.find((s) => s.state === "active")!;
    const before = sub.deductions;
    await form(`/ui/subscriptions/${sub.recurring_id}/charge`, {}).expect(303);
    expect(sub.deductions).toBe(before + 1);
    const viaApi = await request(app).post(`/__sandbox/subscriptions/${sub.recurring_id}/charge`).expect(200);
    expect(viaApi.body.subscription.deductions).toBe(before + 2);
    await request(app).post("/__sandbox/subscriptions/R0/charge").expect(404);

    const notification = deps.store.data.notifications.find((n) => n.url === "http://127.0.0.1:9/hook")!;
    const resent = await form(`/ui/notifications/${notification.notification_id}/resend`, {}).expect(303);
    expect(flashOf(resent.headers.location).ok).toContain("resent");
    expect(notification.attempts.at(-1)?.reason).toBe("resend");
  });

  test("a form never sends the browser away from the dashboard", async () => {
    // the last ones start with the dashboard's path and resolve elsewhere (a dot-dot, a backslash a browser reads as a slash)
    for (const back of [
      "https://evil.example/",
      "//evil.example/x",
      "/elsewhere",
      "/__sandbox/..//evil.example/x",
      "/__sandbox/../..//evil.example/x",
      "/__sandbox/\\evil.example",
      "/__sandbox/\t/evil",
      "/__sandbox/%2e%2e//evil.example/x",
    ]) {
      const res = await form("/ui/clock", { advance: "1s", back }).expect(303);
      expect(res.headers.location, back).toMatch(/^\/__sandbox\/\?ok=/);
    }
    // a dashboard path is kept
    const res = await form("/ui/clock", { advance: "1s", back: "/__sandbox/ui/payouts?x=1" }).expect(303);
    expect(res.headers.location).toMatch(/^\/__sandbox\/ui\/payouts\?x=1&ok=/);
  });
});

describe("the Receiver check tab", () => {
  test("an HTML page under the CSP, loading its script from the assets, the merchants offered; behind ADMIN_TOKEN when set", async () => {
    const res = await request(app).get("/__sandbox/ui/receiver-check").expect(200);
    expect(res.type).toBe("text/html");
    expect(res.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(res.text).toContain('<script src="/__sandbox/assets/receiver-check.js" defer></script>');
    expect(res.text).not.toMatch(/<script>|style="/);
    expect(res.text).toContain('<a href="/__sandbox/ui/receiver-check" class="current" data-tab="receiver-check">Receiver check</a>');
    expect(res.text).toContain('data-endpoint="/__sandbox/receiver-checks"');
    expect(res.text).toContain(`id="check-merchant" name="merchant_id" list="check-merchants" value="${ACME.merchant_id}"`);
    expect(res.text).toContain('<option value="M10002">Blue Harbor Books</option>');
    expect((await request(app).get("/__sandbox/ui/verify").expect(200)).text).toContain('data-tab="receiver-check"');
    await request(app)
      .get("/__sandbox/assets/receiver-check.js")
      .expect(200)
      .expect("Content-Type", /javascript/);

    const guarded = (await makeApp({ adminToken: "check-token" })).app;
    expect((await request(guarded).get("/__sandbox/ui/receiver-check").expect(401)).text).toContain('id="token"');
    const signedIn = await request(guarded).get("/__sandbox/ui/receiver-check").set("authorization", "Bearer check-token").expect(200);
    expect(signedIn.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(signedIn.text).toContain('<script src="/__sandbox/assets/receiver-check.js" defer></script>');
  });

  test("a merchant provisioned by a request is offered after the fixtures, its id escaped", async () => {
    await pay({ merchant_id: "M-<b>x</b>", order_no: "RC-1" });
    const page = (await request(app).get("/__sandbox/ui/receiver-check").expect(200)).text;
    expect(page).toContain('<option value="M-&lt;b&gt;x&lt;/b&gt;">');
    expect(page.indexOf('value="M10002"')).toBeLessThan(page.indexOf('value="M-&lt;b&gt;'));
    expect(page).not.toContain("<b>x</b>");
  });

  test("the notifications page lists one check's notifications with ?check=; probes are hidden by default, shown as probes, never resent", async () => {
    const notification = (id: string, check?: string) => ({
      ...deps.store.data.notifications[0]!,
      notification_id: id,
      attempts: [],
      state: "delivered" as const,
      due_at: "",
      ...(check ? { check, probe: "valid" } : {}),
    });
    await postAuthorise(app, apmPayment({ notify_url: "http://127.0.0.1:9/hook" })).expect(200);
    expect(deps.store.data.notifications.length).toBeGreaterThan(0);
    deps.store.data.notifications.push(notification("N-CHECKED", "chk_0123456789abcdef"), notification("N-OTHER", "chk_fedcba9876543210"));
    const one = (await request(app).get("/__sandbox/ui/notifications").query({ check: "chk_0123456789abcdef" }).expect(200)).text;
    expect(one).toContain('<code id="notifications-check">chk_0123456789abcdef</code>');
    expect(one).toContain("receiver check chk_0123456789abcdef: valid");
    expect(one).not.toContain("chk_fedcba9876543210");
    expect(one).toContain('<span class="status wait">probe</span> <span class="hint">not sent yet</span>');
    expect(one).not.toContain('data-action="resend-');
    const all = (await request(app).get("/__sandbox/ui/notifications").expect(200)).text;
    expect(all).not.toContain("notifications-check");
    expect(all).not.toContain("receiver check chk_");
    expect(all).toContain("2 receiver-check probes hidden");
    expect(all).toMatch(/data-action="resend-ntf_/);
    const shown = (await request(app).get("/__sandbox/ui/notifications").query({ probes: "1" }).expect(200)).text;
    expect(shown).toContain("receiver check chk_fedcba9876543210: valid");
    expect(shown).toContain('name="back" value="/__sandbox/ui/notifications?probes=1"');
    const hostile = (await request(app).get("/__sandbox/ui/notifications").query({ check: "<script>alert(1)</script>" }).expect(200)).text;
    expect(hostile).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(hostile).not.toContain("<script>alert");
  });
});

describe("ADMIN_TOKEN", () => {
  test("a browser signs in once; the cookie then opens pages and the JSON API; a wrong token does not", async () => {
    const guarded = (await makeApp({ adminToken: "s3cret-token-0123456789" })).app;
    const login = await request(guarded).get("/__sandbox/").expect(401);
    expect(login.text).toContain('name="token"');
    await request(guarded)
      .get("/__sandbox/transactions")
      .expect(401, /Bearer/);
    await request(guarded).get("/__sandbox/assets/sandgate.css").expect(200);
    const signIn = await formSession(guarded);
    const wrong = await request(guarded)
      .post("/__sandbox/login")
      .set("cookie", signIn.cookie)
      .type("form")
      .send({ token: "nope", _form: signIn.token })
      .expect(401);
    expect(wrong.text).toContain("not this sandbox");
    const ok = await request(guarded)
      .post("/__sandbox/login")
      .set("cookie", signIn.cookie)
      .type("form")
      .send({ token: "s3cret-token-0123456789", _form: signIn.token })
      .expect(303);
    const cookie = ok.headers["set-cookie"]![0]!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toMatch(/Secure/); // an http sandbox: a Secure cookie would never come back
    const jar = cookie.split(";")[0]!;
    await request(guarded).get("/__sandbox/").set("cookie", jar).expect(200);
    await request(guarded).get("/__sandbox/transactions").set("cookie", jar).expect(200);
    await request(guarded).get("/__sandbox/").set("authorization", "Bearer s3cret-token-0123456789").expect(200);
    // the cookie holds a value derived from the token, never the token: it is not a bearer token,
    // and the token itself is not a session cookie
    expect(cookie).not.toContain("s3cret");
    const value = decodeURIComponent(jar.split("=")[1]!);
    await request(guarded).get("/__sandbox/transactions").set("authorization", `Bearer ${value}`).expect(401);
    await request(guarded).get("/__sandbox/transactions").set("cookie", "sandgate_admin=s3cret-token-0123456789").expect(401);
    // another token (the sandbox restarted with a new one) ends the session
    const other = (await makeApp({ adminToken: "another-token-0123456789" })).app;
    await request(other).get("/__sandbox/transactions").set("cookie", jar).expect(401);
  });

  test("behind TLS (--base-url https://…) the session cookie is Secure", async () => {
    const guarded = (await makeApp({ adminToken: "s3cret-token-0123456789", baseUrl: "https://sandbox.example.com" })).app;
    const signIn = await formSession(guarded);
    const ok = await request(guarded)
      .post("/__sandbox/login")
      .set("cookie", signIn.cookie)
      .type("form")
      .send({ token: "s3cret-token-0123456789", _form: signIn.token })
      .expect(303);
    expect(ok.headers["set-cookie"]![0]).toMatch(/; Secure/);
  });
});

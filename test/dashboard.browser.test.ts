// The QA dashboard in Chromium, as a tester uses it without a terminal: switch the global scenario
// and see the next payment follow it, bind a merchant, find a transaction and force its completion,
// watch a request appear live, advance the clock, reset. Screenshots of each page (docs/screenshots
// with UPDATE_SCREENSHOTS=1). Hostile values shown on the dashboard never run.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Browser, Page } from "playwright-core";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { ACME, directPayment, nextOrderNo, parseXml, textOf } from "./helpers.js";
import { CHROMIUM, HAS_CHROMIUM, launch, screenshot, watchedPage, signIn } from "./browser-helpers.js";

describe.skipIf(!HAS_CHROMIUM)(`the QA dashboard in Chromium (needs ${CHROMIUM})`, () => {
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "dashboard", adminToken: "qa-token" });
    browser = await launch();
    ({ page, problems } = await watchedPage(browser));
    await signIn(page, sandbox.url, "qa-token");
  });
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  /** A direct payment sent as a merchant's server would; its order_status and transaction_id. */
  async function pay(fields: Record<string, unknown> = {}) {
    const body = directPayment({ order_no: nextOrderNo("DASH"), ...fields });
    const res = await fetch(`${sandbox.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const xml = parseXml(await res.text());
    return { order_no: String(body.order_no), order_status: textOf(xml.order_status), transaction_id: textOf(xml.transaction_id) };
  }

  const flash = async () => (await page.textContent("#flash"))?.trim();

  test("switching the global scenario: the next payment follows it", async () => {
    await screenshot(page, "dashboard-overview");
    await page.selectOption("#global-name", "declines");
    await page.click("#set-global");
    expect(await flash()).toBe("Global scenario is now declines.");
    expect(await page.textContent("#current-global")).toBe("declines");
    expect((await pay()).order_status).toBe("0");
    await page.selectOption("#global-name", "default");
    await page.click("#set-global");
    expect((await pay()).order_status).toBe("1");
  });

  test("binding a merchant: its payments follow its scenario, others do not", async () => {
    await page.fill("#bind-merchant", "M-QA-1");
    await page.selectOption("#bind-name", "3ds");
    await page.click("#bind");
    expect(await flash()).toBe("Merchant M-QA-1 now uses 3ds.");
    expect(await page.textContent("#bindings-table")).toContain("M-QA-1");
    expect((await pay({ merchant_id: "M-QA-1" })).order_status).toBe("-1");
    expect((await pay()).order_status).toBe("1");
    await page.click('button[data-action="unbind-M-QA-1"]');
    expect(await page.textContent("#bindings-table")).not.toContain("M-QA-1");
  });

  test("finding a transaction and forcing its completion", async () => {
    const pending = await pay({ card: "4000002760003184" });
    await page.click('a[data-tab="transactions"]');
    await page.fill("#f-order", pending.order_no);
    await page.click("#apply-filter");
    await screenshot(page, "dashboard-transactions");
    await page.click(`a:text("${pending.transaction_id}")`);
    await page.waitForSelector("#complete");
    expect(await page.textContent("#tx-status")).toContain("1000");
    await screenshot(page, "dashboard-transaction");
    // the choices in words: grouped, each once under its plainest name, with the result_info it gives
    const complete = await page.textContent("#complete");
    expect(complete).toContain("3-D Secure");
    expect(complete).toContain("0000:Success (also threeds_passed)");
    expect(complete).toContain("D0301:3-D Secure authentication failed (also threeds_failed)");
    expect(await page.locator('button[data-action="complete-threeds_passed"]').count()).toBe(0);
    await page.click('button[data-action="complete-paid"]');
    expect(await flash()).toContain("is now authorised (2000)");
    expect(await page.textContent("#tx-status")).toContain("2000");
    expect(await page.textContent("#history")).toContain("operator/paid");
    expect(sandbox.deps.store.data.transactions.find((t) => t.transaction_id === pending.transaction_id)?.state).toBe("authorised");
  });

  test("the request log shows a new request without a reload, with its signature check", async () => {
    await page.click('a[data-tab="requests"]');
    await page.waitForSelector("#requests");
    const marker = await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 42));
    const sent = await pay({ order_no: nextOrderNo("LIVE") });
    const row = page.locator("#requests tbody tr", { hasText: sent.order_no });
    await row.waitFor({ timeout: 5_000 });
    expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(marker);
    expect(await row.textContent()).toContain("default/visa-approve");
    await row.locator("summary").click();
    expect(await row.locator("pre").textContent()).toContain(`${ACME.merchant_id}${ACME.account_id}${sent.order_no}USD10.00`);
    await screenshot(page, "dashboard-requests");
  });

  test("the request log filtered to failures keeps only them, live, and exports them as HAR", async () => {
    await page.goto(`${sandbox.url}/__sandbox/ui/requests`);
    await page.fill("#r-http_status", "4xx");
    await page.click('form[action$="/ui/requests"] button[type="submit"]');
    await page.waitForURL(/http_status=4xx/);
    const good = await pay({ order_no: nextOrderNo("OK") });
    const badOrder = nextOrderNo("BAD");
    await fetch(`${sandbox.url}/v1/authorise`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(directPayment({ order_no: badOrder, amount: "ten" })),
    });
    await page.locator("#requests tbody tr", { hasText: badOrder }).waitFor({ timeout: 5_000 });
    expect(await page.locator("#requests tbody").textContent()).not.toContain(good.order_no);
    const [download] = await Promise.all([page.waitForEvent("download"), page.click('a[data-test="har"]')]);
    const har = JSON.parse(await new Response((await download.createReadStream()) as unknown as ReadableStream).text()) as {
      log: { version: string; entries: { response: { status: number } }[] };
    };
    expect(har.log.version).toBe("1.2");
    expect(har.log.entries.length).toBeGreaterThan(0);
    expect(har.log.entries.every((e) => e.response.status >= 400 && e.response.status < 500)).toBe(true);
  });

  test("advancing the clock", async () => {
    await page.click('a[data-tab="overview"]');
    const before = Date.parse((await page.textContent("#clock-now")) ?? "");
    await page.fill("#advance", "3d");
    await page.click("#advance-clock");
    expect(await flash()).toContain("The sandbox clock reads");
    expect(Date.parse((await page.textContent("#clock-now")) ?? "") - before).toBeGreaterThanOrEqual(3 * 86_400_000);
  });

  test("notifications with their attempts", async () => {
    await pay({ notify_url: "http://127.0.0.1:9/unreachable" });
    await fetch(`${sandbox.url}/__sandbox/notifications/deliver`, { method: "POST", headers: { authorization: "Bearer qa-token" } });
    await page.click('a[data-tab="notifications"]');
    expect(await page.textContent("#notifications")).toContain("payment.authorised");
    await screenshot(page, "dashboard-notifications");
  });

  test("reset one merchant, after a confirmation", async () => {
    await pay({ merchant_id: "M-QA-2" });
    await page.click('a[data-tab="overview"]');
    await page.reload();
    await page.selectOption("#reset-merchant", "M-QA-2");
    await page.click("#reset-start");
    await page.waitForSelector("#reset-confirm");
    expect(sandbox.deps.store.data.transactions.some((t) => t.merchant_id === "M-QA-2")).toBe(true);
    await page.click("#reset-confirm");
    expect(await flash()).toBe("Merchant M-QA-2 is back to the fixtures.");
    expect(sandbox.deps.store.data.transactions.some((t) => t.merchant_id === "M-QA-2")).toBe(false);
  });

  test("hostile values shown by the dashboard never run", async () => {
    const hostile = '"><img src=x onerror=alert(1)><script>alert(2)</script>';
    const sent = await pay({
      order_no: `H${hostile}`.slice(0, 60),
      notify_url: `http://127.0.0.1:9/${encodeURIComponent(hostile)}`,
      merchant_id: "M-<b>x</b>",
    });
    await page.goto(`${sandbox.url}/__sandbox/ui/transactions/${sent.transaction_id}`);
    expect(await page.textContent("h1")).toContain(sent.transaction_id);
    await page.goto(`${sandbox.url}/__sandbox/ui/transactions?merchant_id=${encodeURIComponent("M-<b>x</b>")}`);
    expect(await page.textContent("#transactions")).toContain(sent.order_no);
    await page.goto(`${sandbox.url}/__sandbox/ui/requests`);
    await page.locator("#requests tbody tr", { hasText: "M-<b>x</b>" }).first().waitFor({ timeout: 5_000 });
    await page.goto(`${sandbox.url}/__sandbox/?error=${encodeURIComponent(hostile)}`);
    expect(await page.textContent("#flash")).toBe(hostile);
    expect(problems).toEqual([]);
  });
});

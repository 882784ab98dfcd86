// One clock per merchant, everywhere a tester looks (Chromium, through playwright-core): a merchant's
// clock moved 2 h on from the Overview, then its hosted checkout paid by a payer; every date of that
// payment (its transaction, history, request log entries, payer pages and notification) reads in
// the merchant's time, another merchant's in the sandbox's. The Overview shows the offset, and the
// clock card freezes, sets and unfreezes a clock.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Browser, Locator, Page } from "playwright-core";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { ACME, directPayment, nextOrderNo } from "./helpers.js";
import { CHROMIUM, HAS_CHROMIUM, launch, screenshot, signIn, startMerchant, watchedPage, type MerchantSite } from "./browser-helpers.js";

const HOUR = 3_600_000;
const TOLERANCE = 120_000;
const DATE = /\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}/g;

describe.skipIf(!HAS_CHROMIUM)(`one clock per merchant in Chromium (needs ${CHROMIUM})`, () => {
  let sandbox: Sandbox;
  let merchant: MerchantSite;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "merchant-time", adminToken: "qa-token" });
    merchant = await startMerchant(() => sandbox.url, ACME.key);
    browser = await launch();
    ({ page, problems } = await watchedPage(browser));
    await signIn(page, sandbox.url, "qa-token");
  });
  afterAll(async () => {
    await browser?.close();
    await merchant?.close();
    await sandbox?.close();
  });

  const flash = async () => (await page.textContent("#flash"))?.trim() ?? "";
  const sandboxNow = async () => Date.parse((await sandbox.admin.clock()).now);
  /** every date a row shows, each as far from `expected` as it is (ms) */
  const distances = async (row: Locator, expected: number) => {
    const dates = ((await row.first().textContent()) ?? "").match(DATE) ?? [];
    expect(dates.length, `a date in: ${await row.first().textContent()}`).toBeGreaterThan(0);
    return dates.map((d) => Math.abs(Date.parse(`${d.replace(" ", "T")}Z`) - expected));
  };
  const allWithin = async (row: Locator, expected: number) => {
    for (const d of await distances(row, expected)) expect(d).toBeLessThan(TOLERANCE);
  };

  test("a merchant 2 h on: its checkout, payment, request log and notification in its time; another merchant's in the sandbox's; the Overview shows the offset", async () => {
    const other = directPayment({ merchant_id: "TIME-B", account_id: "A1", order_no: nextOrderNo("TIME-B"), notify_url: `${merchant.url}/notify` });
    await fetch(`${sandbox.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(other) });

    await page.goto(`${sandbox.url}/__sandbox/`);
    await page.selectOption("#clock-merchant", ACME.merchant_id);
    await page.fill("#advance", "2h");
    await page.click("#advance-clock");
    expect(await flash()).toMatch(new RegExp(`^Merchant ${ACME.merchant_id}'s clock reads \\S+ \\(2 h ahead of real time\\); 0 changes fell due\\.$`));
    const clocks = page.locator("#merchant-clocks tbody tr");
    expect(await clocks.count()).toBe(1);
    expect(await clocks.first().textContent()).toContain(`${ACME.merchant_id}`);
    expect(await clocks.first().textContent()).toContain("2 h ahead of real time");
    await screenshot(page, "dashboard-overview-clocks");

    // the payer pays A's hosted checkout
    const orderNo = nextOrderNo("TIME-A");
    const payer = await browser.newPage();
    const query = new URLSearchParams({ merchant_id: ACME.merchant_id, account_id: "A10001", currency: "EUR", amount: "12.00", order_no: orderNo });
    await payer.goto(`${merchant.url}/pay?${query}`);
    await payer.waitForURL(/\/pay\/checkout\/[0-9a-f]{24}$/, { timeout: 10_000 });
    await payer.fill("#card", "4242424242424242");
    await payer.fill("#expiration_month", "12");
    await payer.fill("#expiration_year", "2031");
    await payer.fill("#security_code", "123");
    await payer.fill("#holder_name", "Jane Payer");
    await payer.click("#pay");
    await payer.waitForURL(`${merchant.url}/return?**`, { timeout: 10_000 });
    await payer.close();
    await fetch(`${sandbox.url}/__sandbox/notifications/deliver`, { method: "POST", headers: { authorization: "Bearer qa-token" } });

    const real = await sandboxNow();
    const ahead = real + 2 * HOUR;
    const sent = merchant.notifications.filter((n) => (n.data as { order_no?: string }).order_no === orderNo);
    expect(sent.length).toBeGreaterThan(0);
    for (const n of sent) expect(Math.abs(Date.parse(String(n.created_at)) - ahead)).toBeLessThan(TOLERANCE);

    // Transactions: A's row in A's time, B's in the sandbox's; the list says whose clock differs
    await page.goto(`${sandbox.url}/__sandbox/ui/transactions`);
    await allWithin(page.locator("#transactions tbody tr", { hasText: orderNo }), ahead);
    await allWithin(page.locator("#transactions tbody tr", { hasText: String(other.order_no) }), real);
    expect(await page.textContent("#list-dates")).toContain(`${ACME.merchant_id} 2 h ahead`);

    // its detail: every history line in A's time
    await page.locator("#transactions tbody tr", { hasText: orderNo }).locator("a").first().click();
    const history = page.locator("#history tbody tr");
    expect(await history.count()).toBeGreaterThan(0);
    for (let i = 0; i < (await history.count()); i++) await allWithin(history.nth(i), ahead);

    // the request log: the checkout and its payer pages in A's time, B's payment in the sandbox's
    await page.goto(`${sandbox.url}/__sandbox/ui/requests?order_no=${orderNo}`);
    const entries = page.locator("#requests tbody tr", { hasText: orderNo });
    await entries.first().waitFor({ timeout: 5_000 });
    expect(await entries.count()).toBeGreaterThanOrEqual(2);
    for (let i = 0; i < (await entries.count()); i++) await allWithin(entries.nth(i), ahead);
    await page.goto(`${sandbox.url}/__sandbox/ui/requests?order_no=${String(other.order_no)}`);
    await allWithin(page.locator("#requests tbody tr", { hasText: String(other.order_no) }), real);

    // the notifications: A's dated in A's time, B's in the sandbox's
    await page.goto(`${sandbox.url}/__sandbox/ui/notifications`);
    for (const [who, expected] of [
      [ACME.merchant_id, ahead],
      ["TIME-B", real],
    ] as const) {
      const rows = page.locator("#notifications tbody tr", { hasText: who });
      expect(await rows.count(), `${who}'s notifications`).toBeGreaterThan(0);
      for (let i = 0; i < (await rows.count()); i++) await allWithin(rows.nth(i), expected);
    }
    expect(problems).toEqual([]);
  });

  test("the clock card: freeze, set to a later moment, a moment before refused, unfreeze", async () => {
    await page.goto(`${sandbox.url}/__sandbox/`);
    await page.selectOption("#clock-merchant", "TIME-B");
    await page.click("#freeze-clock");
    expect(await flash()).toMatch(/^Merchant TIME-B's clock stands at (\S+) \(.* ahead of real time, frozen\)/);
    const standing = /stands at (\S+) /.exec(await flash())![1]!;
    expect(await page.locator("#merchant-clocks tbody tr", { hasText: "TIME-B" }).textContent()).toContain("frozen");
    expect((await sandbox.admin.clock({ merchant: "TIME-B" })).now).toBe(standing);

    await page.selectOption("#clock-merchant", "TIME-B");
    await page.fill("#clock-to", "2020-01-01T00:00:00");
    await page.click("#set-clock");
    expect(await flash()).toMatch(/^a clock only moves forward: .*; nothing changed$/);
    expect((await sandbox.admin.clock({ merchant: "TIME-B" })).now).toBe(standing);

    await page.selectOption("#clock-merchant", "TIME-B");
    await page.fill("#clock-to", "2031-01-01T09:30:00");
    await page.click("#set-clock");
    expect(await flash()).toMatch(/^Merchant TIME-B's clock stands at 2031-01-01T09:30:00\.000Z/);
    await screenshot(page, "dashboard-clock-card");

    await page.selectOption("#clock-merchant", "TIME-B");
    await page.click("#unfreeze-clock");
    expect(await flash()).toMatch(/^Merchant TIME-B's clock reads 2031-01-01T09:30:0/);
    expect((await sandbox.admin.clock({ merchant: "TIME-B" })).frozen).toBe(false);
    // the sandbox's own clock never moved
    expect(await sandbox.admin.clock()).toMatchObject({ offset_ms: 0, frozen: false });
    expect(problems).toEqual([]);
  });
});

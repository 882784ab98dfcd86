// Payer journeys in Chromium (Debian's, through playwright-core), each from the merchant's own page
// to the merchant's return_url: the signed result is verified there and the notification is
// received by the merchant's receiver. Hostile values never run.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Browser, Page } from "playwright-core";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { ACME, nextOrderNo } from "./helpers.js";
import { HAS_CHROMIUM, CHROMIUM, launch, screenshot, startMerchant, watchedPage, type MerchantSite } from "./browser-helpers.js";

describe.skipIf(!HAS_CHROMIUM)(`payer journeys in Chromium (needs ${CHROMIUM}: apt-get install chromium)`, () => {
  let sandbox: Sandbox;
  let merchant: MerchantSite;
  let browser: Browser;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "journeys" });
    merchant = await startMerchant(() => sandbox.url, ACME.key);
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await merchant?.close();
    await sandbox?.close();
  });

  /** Opens the merchant's pay link for a new order and returns the page once the payer is at Sandgate. */
  async function start(fields: Record<string, string>, at: RegExp): Promise<{ page: Page; problems: string[]; orderNo: string }> {
    const orderNo = fields.order_no ?? nextOrderNo("JOURNEY");
    const query = new URLSearchParams({ merchant_id: ACME.merchant_id, account_id: "A10001", currency: "EUR", amount: "42.50", ...fields, order_no: orderNo });
    const { page, problems } = await watchedPage(browser);
    await page.goto(`${merchant.url}/pay?${query}`);
    await page.waitForURL(at, { timeout: 10_000 });
    await page.waitForLoadState("load");
    return { page, problems, orderNo };
  }

  /** The payer is back at the merchant: its signed result, and the notification the merchant received. */
  async function finished(page: Page, orderNo: string, orderStatus: string, event: string) {
    await page.waitForURL(`${merchant.url}/return?**`, { timeout: 10_000 });
    expect(await page.textContent("#merchant-return")).toBe(`Order ${orderNo}: status ${orderStatus}`);
    const back = merchant.returns.find((r) => r.params.order_no === orderNo);
    expect(back?.signatureValid).toBe(true);
    expect(back?.params.order_status).toBe(orderStatus);
    await fetch(`${sandbox.url}/__sandbox/notifications/deliver`, { method: "POST" });
    const events = merchant.notifications.filter((n) => (n.data as { order_no?: string }).order_no === orderNo).map((n) => n.event);
    expect(events).toContain(event);
    return back!.params;
  }

  const payByCard = async (page: Page, card: string) => {
    await page.fill("#card", card);
    await page.fill("#expiration_month", "12");
    await page.fill("#expiration_year", "2030");
    await page.fill("#security_code", "123");
    await page.fill("#holder_name", "Jane Payer");
    await page.click("#pay");
  };

  const CHECKOUT = /\/pay\/checkout\/[0-9a-f]{24}$/;
  const THREEDS = /\/pay\/3ds\/[0-9a-f]{24}$/;
  const APM = /\/pay\/apm\/[0-9a-f]{24}$/;

  test("merchant page → /v1/checkout → hosted checkout → card approves", async () => {
    const { page, problems, orderNo } = await start({ items: "Tent#,#T-1#,#30.00#,#1#;#Stove#,#S-2#,#6.25#,#2" }, CHECKOUT);
    expect(await page.textContent('dd[data-field="amount"]')).toBe("42.50 EUR");
    expect(await page.locator("table.items tbody tr").count()).toBe(2);
    // the tester panel in groups, each decline by its reason with its code; giving up apart, last
    expect(await page.$$eval(".tester-group h3", (hs) => hs.map((h) => h.textContent))).toEqual([
      "Approve",
      "Decline",
      "3-D Secure and review",
      "Wait",
      "End without paying",
    ]);
    expect(await page.textContent('button[data-outcome="insufficient_funds"]')).toBe("Insufficient funds D0051");
    expect(await page.locator('.tester-group.apart button[data-outcome="cancelled"]').count()).toBe(1);
    await screenshot(page, "payer-hosted-checkout");
    await payByCard(page, "4242424242424242");
    const params = await finished(page, orderNo, "1", "payment.authorised");
    expect(params.card).toBe("424242******4242");
    expect(problems).toEqual([]);
  });

  test("hosted checkout → declined card", async () => {
    const { page, problems, orderNo } = await start({}, CHECKOUT);
    await payByCard(page, "4000000000000002");
    expect((await finished(page, orderNo, "0", "payment.declined")).result_info).toBe("D0005:Do not honor");
    expect(problems).toEqual([]);
  });

  test("hosted checkout → 3-D Secure challenge → the documented code passes", async () => {
    const { page, problems, orderNo } = await start({}, CHECKOUT);
    await payByCard(page, "4000002760003184");
    await page.waitForURL(THREEDS);
    await screenshot(page, "payer-3ds-challenge");
    await page.fill("#challenge_code", (await page.textContent("#documented-code")) ?? "");
    await page.click("#submit-code");
    await finished(page, orderNo, "1", "payment.authorised");
    expect(problems).toEqual([]);
  });

  test("hosted checkout → 3-D Secure challenge → fail", async () => {
    const { page, problems, orderNo } = await start({}, CHECKOUT);
    await payByCard(page, "4000002760003184");
    await page.waitForURL(THREEDS);
    await page.click('button[data-outcome="threeds_failed"]');
    expect((await finished(page, orderNo, "0", "payment.declined")).result_info).toBe("D0301:3-D Secure authentication failed");
    expect(problems).toEqual([]);
  });

  test("APM page → paid", async () => {
    const { page, problems, orderNo } = await start({ op: "authorise", account_id: "A10002", currency: "BRL", payment_method: "pix" }, APM);
    expect(await page.textContent("h1")).toBe("Pix");
    await screenshot(page, "payer-apm");
    await page.click('button[data-outcome="paid"]');
    await finished(page, orderNo, "1", "payment.paid");
    expect(problems).toEqual([]);
  });

  test("APM page → cancelled", async () => {
    const { page, problems, orderNo } = await start({ op: "authorise", account_id: "A10002", currency: "BRL", payment_method: "boleto" }, APM);
    await page.click('button[data-outcome="cancelled"]');
    expect((await finished(page, orderNo, "0", "payment.cancelled")).result_info).toBe("C0001:Cancelled by the payer");
    expect(problems).toEqual([]);
  });

  test("direct payment with a challenge → 3-D Secure page → pass", async () => {
    const { page, problems, orderNo } = await start(
      { op: "authorise", card: "4000002760003184", expiration_month: "12", expiration_year: "2030", security_code: "123" },
      THREEDS,
    );
    await page.click('button[data-outcome="threeds_passed"]');
    const params = await finished(page, orderNo, "1", "payment.authorised");
    expect(params.card).toBe("400000******3184");
    expect(problems).toEqual([]);
  });

  test("a payment without return_url ends on a result page; opening the page again shows the result, not a second charge", async () => {
    const { page, problems, orderNo } = await start({ op: "authorise", account_id: "A10002", currency: "BRL", payment_method: "pix", return_url: "" }, APM);
    const address = page.url();
    await page.click('button[data-outcome="paid"]');
    await page.waitForSelector('dd[data-field="order_status"]');
    expect(await page.textContent("h1")).toBe("Payment approved");
    await screenshot(page, "payer-result");
    await page.goto(address);
    expect(await page.textContent("h1")).toBe("Payment approved");
    expect(await page.locator('button[data-outcome="paid"]').count()).toBe(0);
    const tx = sandbox.deps.store.data.transactions.find((t) => t.order_no === orderNo)!;
    expect(tx.state).toBe("paid");
    expect(problems).toEqual([]);
  });

  test("hostile values in every field a payer page shows: no dialog, no console error, no script", async () => {
    const hostile = '"><img src=x onerror=alert(1)><script>alert(2)</script>';
    const { page, problems, orderNo } = await start(
      { order_no: `H${hostile}`.slice(0, 60), items: `${hostile}#,#${hostile}#,#1.00#,#1`, note: hostile, first_name: hostile },
      CHECKOUT,
    );
    expect(await page.textContent('dd[data-field="order_no"]')).toBe(orderNo);
    expect(await page.textContent("table.items td")).toBe(hostile);
    await payByCard(page, "4242424242424241");
    await page.waitForSelector("#card-errors");
    expect(await page.textContent("#card-errors")).toContain("fails the Luhn check");
    await page.click('button[data-outcome="pending"]');
    await page.waitForURL(`${merchant.url}/return?**`);
    expect(problems).toEqual([]);

    // the APM page names the method as sent; the result page shows the order as sent
    const apm = await start(
      { op: "authorise", account_id: "A10002", currency: "BRL", payment_method: hostile, order_no: `A${hostile}`.slice(0, 60), return_url: "" },
      APM,
    );
    expect(await apm.page.textContent("h1")).toBe(hostile);
    await apm.page.click('button[data-outcome="failed"]');
    await apm.page.waitForSelector('dd[data-field="order_no"]');
    expect(await apm.page.textContent('dd[data-field="order_no"]')).toBe(apm.orderNo);
    expect(apm.problems).toEqual([]);
  });
});

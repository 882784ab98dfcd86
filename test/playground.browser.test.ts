// The dashboard's QA playground in Chromium, as a tester uses it with nothing but the browser:
// sign in, open the Playground tab, make a payment by card the scenario declines, see the decline
// and follow the link to the transaction; start a hosted checkout, go on to the payer page, pay
// there with 4242 4242 4242 4242 and come back to the playground's result, completed. No request
// to the sandbox is made from outside the browser. Screenshots: /tmp/playground-*.png.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Page } from "playwright-core";
import type { Sandbox } from "../src/server/sandbox.js";
import { CHROMIUM, HAS_CHROMIUM, screenshot } from "./browser-helpers.js";
import { signedInDashboard, type SignedInDashboard } from "./signed-in-dashboard.js";

/** Where the screenshots go, for a person to look at the layout. */
const shot = async (page: Page, name: string) => {
  await page.screenshot({ path: `/tmp/playground-${name}.png`, fullPage: true });
  await screenshot(page, `dashboard-playground-${name}`); // docs/screenshots with UPDATE_SCREENSHOTS=1
};

describe.skipIf(!HAS_CHROMIUM)(`the QA playground in Chromium (needs ${CHROMIUM})`, () => {
  let dashboard: SignedInDashboard | undefined;
  let sandbox: Sandbox;
  let page: Page;

  beforeAll(async () => {
    dashboard = await signedInDashboard("playground");
    ({ sandbox, page } = dashboard);
  });
  afterAll(() => dashboard?.close());

  const text = async (selector: string) => (await page.textContent(selector))?.trim();

  test("a card payment the scenario declines: the decline, then the transaction's page", async () => {
    await page.click('a[data-tab="playground"]');
    await page.waitForSelector("#playground-card");
    await shot(page, "form");
    await page.fill("#card-card", "4000 0000 0000 0002");
    await page.click("#playground-card-submit");
    await page.waitForURL(/\/__sandbox\/ui\/playground\/result\/\d+$/);
    expect(await text("#outcome")).toBe("Declined");
    expect(await text("#result-info")).toBe("D0005:Do not honor");
    expect(await text("#rule")).toBe("default/decline-generic");
    expect(await text("#tx-status")).toBe("6000 declined");
    await shot(page, "result");
    const id = await text("#transaction-link");
    await page.click("#transaction-link");
    await page.waitForURL(`**/__sandbox/ui/transactions/${id}`);
    expect(await text("h1")).toBe(`Transaction ${id}`);
    expect(await text("#tx-status")).toBe("6000 declined");
    expect(await page.textContent("#history")).toContain("default/decline-generic");
    expect(sandbox.deps.store.records.transaction(id!)).toMatchObject({ state: "declined", result: "do_not_honor", merchant_id: "M10001" });
  });

  test("bad input: the form says what is wrong and keeps what was typed", async () => {
    await page.click('a[data-tab="playground"]');
    await page.fill("#card-amount", "");
    await page.fill("#card-currency", "US$");
    await page.click("#playground-card-submit");
    await page.waitForSelector("#playground-error");
    expect(await text("#playground-error")).toContain("currency must be a three-letter currency code; amount is required");
    expect(await page.inputValue("#card-currency")).toBe("US$");
    await shot(page, "error");
  });

  test("a hosted checkout: on to the payer page, paid with 4242 4242 4242 4242, back at the playground completed", async () => {
    const before = sandbox.deps.store.data.transactions.length;
    await page.click('a[data-tab="playground"]');
    await page.click("#playground-checkout-submit");
    await page.waitForURL(/\/__sandbox\/ui\/playground\/result\/\d+$/);
    expect(await text("#outcome")).toBe("Waiting for the payer");
    // no payment method is named before the payer chose one
    expect(await text("#paid-with")).toBe("not chosen yet: the payer chooses at the checkout page");
    await shot(page, "checkout-started");
    const id = await text("#transaction-link");
    await page.click("#open-payer-page");
    await page.waitForURL(/\/pay\/checkout\/[0-9a-f]{24}$/);
    await page.fill("#card", "4242424242424242");
    await page.fill("#expiration_month", "12");
    await page.fill("#expiration_year", "2031");
    await page.fill("#security_code", "123");
    await page.fill("#holder_name", "Quinn Tester");
    await page.click("#pay");
    await page.waitForURL(/\/__sandbox\/ui\/playground\/returned\?/);
    expect(await text("#outcome")).toBe("Approved (authorised)");
    expect(await text("#transaction-link")).toBe(id);
    expect(await text("#tx-status")).toBe("2000 authorised");
    expect(await text("#flash")).toContain("the return's signature is valid");
    await shot(page, "checkout-returned");
    expect(sandbox.deps.store.data.transactions.length).toBe(before + 1);
    expect(sandbox.deps.store.records.transaction(id!)).toMatchObject({ kind: "checkout", state: "authorised", card_masked: "424242******4242" });
  });

  test("the account follows the merchant: only the chosen merchant's accounts are offered, each once, and choosing another merchant picks one of its own", async () => {
    await page.click('a[data-tab="playground"]');
    const offered = () =>
      page.$$eval("#card-account optgroup:not([hidden]) option", (options) =>
        options.map((o) => `${(o.parentElement as unknown as { label: string }).label} ${(o as unknown as { value: string }).value}`),
      );
    const before = await offered();
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((o) => o.startsWith("M10001 "))).toBe(true);
    await page.selectOption("#card-merchant", "M10002");
    const after = await offered();
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((o) => o.startsWith("M10002 "))).toBe(true);
    expect(new Set(after).size).toBe(after.length);
    const chosen = await page.inputValue("#card-account");
    expect(after.map((o) => o.split(" ").at(-1))).toContain(chosen);
    // and the payment goes through as that merchant's
    await page.fill("#card-card", "4242424242424242");
    await page.click("#playground-card-submit");
    await page.waitForURL(/\/__sandbox\/ui\/playground\/result\/\d+$/);
    expect(await text("#outcome")).toMatch(/^Approved/);
  });

  test("nothing went wrong in the browser (no script error, no blocked resource)", () => {
    expect(dashboard?.problems).toEqual([]);
  });
});

// The /v1/checkout page in a real browser (Debian's Chromium through playwright-core): its script
// submits theForm to the hosted checkout with every input, and hostile values stay data.
import { existsSync } from "node:fs";
import { chromium, type Browser, type Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { ANY_SIGNATURE, ACME, nextOrderNo } from "./helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const HOSTED = /\/pay\/checkout\/[0-9a-f]{24}$/;
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

// Any write to window.__xss (the payloads below make one if they run) calls the page binding.
const XSS_TRAP = `Object.defineProperty(window, "__xss", {
  configurable: true,
  get: function () { return window.__xssValue; },
  set: function (v) { window.__xssValue = v; window.__xssHit(); }
});`;

describe.skipIf(!existsSync(CHROMIUM))(`/v1/checkout in Chromium (needs ${CHROMIUM}: apt-get install chromium)`, () => {
  let sandbox: Sandbox;
  let browser: Browser;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "x" });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  test("the page submits itself to the hosted checkout; hostile values do not run", async () => {
    const orderNo = nextOrderNo("BROWSER");
    const hostile = {
      note: "</script><script>window.__xss=1</script>",
      first_name: '"><img src=x onerror="window.__xss=2">',
      custom: "<script>window.__xss=3</script>",
    };
    const body = {
      merchant_id: ACME.merchant_id,
      account_id: ACME.account_id,
      order_no: orderNo,
      currency: "EUR",
      amount: "42.50",
      encryption_data: ANY_SIGNATURE,
      ...hostile,
    };
    const res = await fetch(`${sandbox.url}/v1/checkout`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    const html = await res.text();
    // the page's own policy, which must let its inline script (and nothing else) run: allowed by hash
    const csp = res.headers.get("content-security-policy");
    expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-[^']+'; script-src 'sha256-[^']+'; base-uri 'none'$/);

    const page = await browser.newPage();
    let xssHits = 0;
    await page.exposeFunction("__xssHit", () => xssHits++);
    await page.addInitScript(XSS_TRAP);
    // serve the merchant's copy of the page from the sandbox's origin, as a shop would embed it, under the page's policy
    const loader = `${sandbox.url}/__test/checkout-loader`;
    await page.route(loader, (route) =>
      route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", headers: { "content-security-policy": csp! }, body: html }),
    );
    const submitted = page.waitForRequest((r: Request) => r.method() === "POST" && HOSTED.test(r.url()), { timeout: 10_000 });

    await page.goto(loader, { waitUntil: "commit" });
    const form = new URLSearchParams((await submitted).postData() ?? "");
    await page.waitForURL(HOSTED, { timeout: 10_000 });
    await page.waitForLoadState("load");

    expect(await page.title()).toBe("Hosted checkout — Sandgate");
    expect(await page.textContent('dd[data-field="order_no"]')).toBe(orderNo);
    expect(await page.textContent('dd[data-field="amount"]')).toBe("42.50 EUR");
    expect(await page.isVisible("#card-form")).toBe(true);
    expect(form.get("orderNo")).toBe(orderNo);
    expect(form.get("account_id")).toBe("GW-880101");
    expect(form.get("color_depth")).toBe("24");
    for (const [field, value] of Object.entries(hostile)) expect(form.get(field), field).toBe(value);
    expect(new URLSearchParams(form.get("allParams") ?? "").get("note")).toBe(hostile.note);

    expect(xssHits).toBe(0);
    expect(await page.evaluate("window.__xss")).toBeUndefined();
    await page.close();
  });
});

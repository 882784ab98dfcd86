// The dashboard's Verify tab in Chromium, as a tester uses it: pick a recording (HAR file), submit,
// read the differences grouped by operation with the gateway's value beside Sandgate's, and the
// legend of difference kinds. Values from the recording stay text; no console error; the serving
// sandbox's transactions are untouched. Screenshot: dashboard-verify (docs/screenshots with
// UPDATE_SCREENSHOTS=1).
import request from "supertest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Browser, Page } from "playwright-core";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { directPayment, makeApp, postAuthorise } from "./helpers.js";
import { CHROMIUM, HAS_CHROMIUM, launch, screenshot, watchedPage, signIn } from "./browser-helpers.js";

/** A recording made on a Sandgate of its own: an approved and a declined payment, as its HAR export. */
async function recording(): Promise<string> {
  const { app } = await makeApp();
  await postAuthorise(app, directPayment()).expect(200);
  await postAuthorise(app, directPayment({ card: "4000000000000002" })).expect(200);
  return JSON.stringify((await request(app).get("/__sandbox/requests.har").expect(200)).body);
}

/** The first approval's recorded answer made a decline text (XML-escaped, as a gateway would send it). */
const altered = (har: string, text: string) => {
  expect(har).toContain("<result_info>0000:Success</result_info>");
  const xml = text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return har.replace("<result_info>0000:Success</result_info>", `<result_info>${xml.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}</result_info>`);
};

const file = (name: string, text: string) => ({ name, mimeType: "application/json", buffer: Buffer.from(text) });

describe.skipIf(!HAS_CHROMIUM)(`the dashboard's Verify tab in Chromium (needs ${CHROMIUM})`, () => {
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let har: string;

  beforeAll(async () => {
    har = await recording();
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "verify-tab", adminToken: "qa-token" });
    browser = await launch();
    ({ page, problems } = await watchedPage(browser));
    await signIn(page, sandbox.url, "qa-token");
  });
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  /** Picks the file, submits, and waits for the report (or the refusal). */
  async function upload(name: string, text: string): Promise<void> {
    await page.setInputFiles("#verify-file", file(name, text));
    await page.click("#verify-submit");
    await page.waitForSelector("#verify-summary, #verify-flash.bad", { timeout: 15_000 });
  }

  test("an altered recording: the difference row with the gateway's value beside Sandgate's, and the legend", async () => {
    const before = sandbox.deps.store.data.transactions.length;
    await page.click('a[data-tab="verify"]');
    await page.waitForSelector("#verify-form");
    expect(await page.textContent("main p")).toContain("Replays a recording of the real gateway");
    expect(await page.textContent("#verify-scenario")).toBe("default");

    await upload("checkout-session.har", altered(har, "0116:Insufficient funds"));
    expect(await page.textContent("#verify-summary p")).toMatch(
      /^1 difference checkout-session\.har: replayed 2 exchanges against a fresh Sandgate \(scenario default\); 1 exchange differs/,
    );
    const group = page.locator('.verify-operation[data-operation="authorise"]');
    expect(await group.locator("h2").textContent()).toBe("authorise 1 difference");
    const row = group.locator('tr[data-path="respon.result_info"]');
    expect(await row.locator("td").allTextContents()).toEqual([
      "#1",
      "respon.result_info" + "must agree: a result code or text",
      "value",
      "0116:Insufficient funds",
      "0000:Success",
    ]);
    expect(await row.locator(".verify-expected").textContent()).toBe("0116:Insufficient funds");
    expect(await row.locator(".verify-actual").textContent()).toBe("0000:Success");
    expect(await page.textContent("#verify-kinds")).toContain("often closed with data");
    expect(await page.locator("#verify-kinds tr").count()).toBe(8);
    await page.locator("#verify-summary summary").click();
    await screenshot(page, "dashboard-verify");
    expect(sandbox.deps.store.data.transactions).toHaveLength(before);
    expect(problems).toEqual([]);
  });

  test("a recording Sandgate answers alike says so; suggested rules show as a scenario file", async () => {
    await upload("same.har", har);
    expect(await page.textContent("#verify-summary p")).toContain("no differences");
    expect(await page.locator(".verify-operation").count()).toBe(0);
    await page.selectOption("#verify-suggest", "1");
    await upload("altered.har", altered(har, "0116:Insufficient funds"));
    expect(await page.textContent("#verify-suggestions pre")).toContain('"result_info": "0116:Insufficient funds"');
    await page.selectOption("#verify-suggest", "");
    expect(problems).toEqual([]);
  });

  test("values from the recording stay text; a file that is not a HAR gets the API's message", async () => {
    const hostile = '0116:"><img src=x onerror=alert(1)><script>alert(2)</script>';
    await upload("hostile<b>.har", altered(har, hostile));
    expect(await page.locator('tr[data-path="respon.result_info"] .verify-expected').textContent()).toBe(hostile);
    expect(await page.textContent("#verify-summary p")).toContain("hostile<b>.har");
    expect(await page.locator("#verify-result img, #verify-result script, #verify-result b").count()).toBe(0);

    await upload("notes.har", "these are not the droids");
    expect(await page.textContent("#verify-flash")).toMatch(/^Could not verify notes\.har: the HAR: it is not JSON/);
    expect(await page.locator("#verify-summary").count()).toBe(0);
    // the refusal itself is the 400 the watcher notes; nothing else went wrong
    expect(problems.filter((p) => !/^400 .*\/__sandbox\/verify$/.test(p))).toEqual([]);
  });
});

// The scenario editor in Chromium, as a QA tester with no text editor on the server's disk uses it:
// a new scenario from the Overview, a bad rule shown beside its line before any save (and refused
// by the server too, nothing saved), a sample request tried ("which rule answers this?"), a good
// one saved and bound to a merchant, whose next payment gets the rule's outcome. The saved scenario
// is in a state export and survives a restart with --data.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Browser, Page } from "playwright-core";
import { spawnSandgate, type SandgateProcess } from "../scripts/sandgate-process.js";
import { directPayment, nextOrderNo, parseXml, textOf } from "./helpers.js";
import { CHROMIUM, HAS_CHROMIUM, launch, screenshot, signIn, watchedPage } from "./browser-helpers.js";

const TOKEN = "qa-editor-token";
const GOOD = `name: qa-short-funds
description: The QA team's card 4111 is always short of funds.
extends: default
rules:
  - id: short
    when: { operation: authorise, card: "4111111111111111" }
    then: { outcome: insufficient_funds }
`;
const BAD = GOOD.replace("operation: authorise", "operation: authrise");

describe.skipIf(!HAS_CHROMIUM)(`the scenario editor in Chromium (needs ${CHROMIUM})`, () => {
  const data = join(mkdtempSync(join(tmpdir(), "sandgate-editor-")), "state.json");
  const start = () => spawnSandgate(["--port", "0", "--host", "127.0.0.1", "--data", data], { env: { ADMIN_TOKEN: TOKEN } });
  let proc: SandgateProcess;
  let url: string;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    proc = start();
    url = await proc.url;
    browser = await launch();
    ({ page, problems } = await watchedPage(browser));
    await signIn(page, url, TOKEN);
  });
  afterAll(async () => {
    await browser?.close();
    proc?.child.kill("SIGTERM");
    await proc?.exited;
  });

  const api = (path: string, init: RequestInit = {}) => fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, ...init.headers } });
  const flash = async () => (await page.textContent("#flash"))?.trim() ?? "";
  const state = () => page.locator("#editor-state");

  test("write a rule, see a bad one's error beside its line, try a request, save, bind: the merchant's payment gets the rule's outcome", async () => {
    await page.goto(`${url}/__sandbox/`);
    await page.click("#new-scenario");
    await page.waitForURL(/\/__sandbox\/ui\/scenario-editor$/);
    await expect.poll(() => state().textContent()).toMatch(/^Valid: scenario my-scenario, \d+ rules once resolved/);

    // a bad rule: its error beside its line, before any save; the save button waits
    await page.fill("#editor-source", BAD);
    await expect.poll(() => page.textContent("#editor-problems")).toContain("is not an operation");
    expect(await page.getAttribute("#editor-problems li", "data-line")).toBe("6");
    expect(await page.textContent("#editor-problems li")).toMatch(/^line 6 rules\.0\.when\.operation "authrise" is not an operation/);
    expect(await state().textContent()).toBe("1 problem: fix it to save.");
    expect(await page.isDisabled("#editor-save")).toBe(true);
    await screenshot(page, "dashboard-scenario-editor-problem");

    // the server refuses it too (a browser without the script): the editor again, with the problem, nothing saved
    await page.$eval("#editor-save", (b) => ((b as unknown as { disabled: boolean }).disabled = false));
    await page.click("#editor-save");
    await page.waitForURL(/\/__sandbox\/ui\/scenarios\/save$/);
    expect(await page.textContent("#editor-problems")).toContain('"authrise" is not an operation');
    expect(await page.inputValue("#editor-source")).toBe(BAD);
    expect((await api("/__sandbox/scenarios/qa-short-funds")).status).toBe(404);

    // the good one, tried before it is saved
    await page.fill("#editor-source", GOOD);
    await expect.poll(() => state().textContent()).toMatch(/^Valid: scenario qa-short-funds/);
    await page.selectOption("#try-operation", "authorise");
    await page.fill("#try-fields", JSON.stringify({ card: "4111111111111111", amount: "10.00" }));
    await page.click("#try-run");
    await expect.poll(() => page.textContent("#try-answer")).toBe("Rule qa-short-funds/short answers: insufficient_funds.");
    await page.fill("#try-fields", JSON.stringify({ card: "4242424242424242" }));
    await page.click("#try-run");
    await expect.poll(() => page.textContent("#try-answer")).toBe("Rule default/visa-approve answers: approved.");
    await screenshot(page, "dashboard-scenario-editor");

    await page.click("#editor-save");
    await page.waitForURL(/\/__sandbox\/ui\/scenarios\/qa-short-funds\?/);
    expect(await flash()).toBe("Scenario qa-short-funds saved (into the sandbox's state): bind a merchant to it below.");
    expect(await page.textContent("#rules")).toContain("short");
    await page.fill("#scenario-bind-merchant", "M-EDITOR");
    await page.click("#scenario-bind-button");
    expect(await flash()).toBe("Merchant M-EDITOR now uses qa-short-funds.");

    const pay = async (merchant: string) => {
      const body = directPayment({ merchant_id: merchant, account_id: "A1", order_no: nextOrderNo(merchant), card: "4111111111111111" });
      const res = await fetch(`${url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      return textOf(parseXml(await res.text()).result_info);
    };
    expect(await pay("M-EDITOR")).toBe("D0051:Insufficient funds");
    expect(await pay("M-OTHER")).toBe("0000:Success");
    expect(problems).toEqual([]);
  });

  test("the saved scenario is in a state export and survives a restart with --data", async () => {
    const file = await (await api("/__sandbox/state")).text();
    expect(JSON.parse(file.slice(0, file.indexOf("\n"))).scenarios).toEqual({ "qa-short-funds": GOOD });

    proc.child.kill("SIGTERM");
    await proc.exited;
    proc = start();
    url = await proc.url;
    const back = await api("/__sandbox/scenarios/qa-short-funds");
    expect(back.status).toBe(200);
    expect(((await back.json()) as { rules: { id: string }[] }).rules[0]).toMatchObject({ id: "short" });

    // and it opens in the editor again, as saved (the browser's session may outlive the restart)
    await page.goto(`${url}/__sandbox/ui/scenarios/qa-short-funds`);
    if (await page.locator("#token").count()) {
      await signIn(page, url, TOKEN);
      await page.goto(`${url}/__sandbox/ui/scenarios/qa-short-funds`);
    }
    await page.click("#scenario-edit");
    expect(await page.inputValue("#editor-source")).toBe(GOOD);
  });
});

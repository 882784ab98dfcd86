// The dashboard's Receiver check tab in Chromium, as a tester uses it: give a receiver's URL, run
// the check, read one row per probe with its verdict, and follow the link to the check's
// notifications. Two receivers on 127.0.0.1: one that acknowledges everything (the forged and
// tampered probes fail) and the example shop's correct one (all 16 pass). A hostile URL stays text,
// an unreachable receiver is said once, the API's refusal is a message; no console error.
// Screenshot: dashboard-receiver-check (docs/screenshots with UPDATE_SCREENSHOTS=1).
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Browser, Page } from "playwright-core";
import { createReceiver } from "../examples/merchant/src/receiver.js";
import { PROBES } from "../src/receiver-check/probes.js";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { ACME } from "./helpers.js";
import { CHROMIUM, HAS_CHROMIUM, launch, screenshot, watchedPage, signIn } from "./browser-helpers.js";

interface Receiver {
  url: string;
  paths: string[];
  close(): Promise<void>;
}

async function listen(handler: RequestListener): Promise<Receiver> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? "");
    handler(req, res);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = await listen(() => undefined);
  await probe.close();
  return Number(new URL(probe.url).port);
}

const FORGED_OR_TAMPERED = ["wrong_key", "tampered_amount", "tampered_status", "signature_missing", "signature_not_hex", "signature_wrong_length"];

describe.skipIf(!HAS_CHROMIUM)(`the dashboard's Receiver check tab in Chromium (needs ${CHROMIUM})`, () => {
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let acceptsAll: Receiver;
  let correct: Receiver;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "receiver-check-tab", adminToken: "qa-token" });
    acceptsAll = await listen((req, res) => req.resume().on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end("ok")));
    correct = await listen(createReceiver({ key: ACME.key, onEvent: () => undefined }));
    browser = await launch();
    ({ page, problems } = await watchedPage(browser));
    await signIn(page, sandbox.url, "qa-token");
  });
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
    await acceptsAll?.close();
    await correct?.close();
  });

  /** Fills the form, submits, and waits for the report (or the refusal). */
  async function check(url: string, merchant: string = ACME.merchant_id): Promise<void> {
    await page.fill("#check-url", url);
    await page.fill("#check-merchant", merchant);
    await page.click("#check-submit");
    await page.waitForSelector("#check-summary, #check-flash.bad", { timeout: 30_000 });
  }

  const verdicts = async () =>
    Object.fromEntries(
      await page
        .locator("#check-probes tbody tr")
        .evaluateAll((rows) => rows.map((r) => [r.getAttribute("data-probe"), r.querySelector(".check-verdict")?.textContent])),
    );

  test("the correct receiver: 16 probes pass; the link lists the check's notifications", async () => {
    await page.click('a[data-tab="receiver-check"]');
    await page.waitForSelector("#check-form");
    expect(await page.textContent('a[data-tab="receiver-check"]')).toBe("Receiver check");
    expect(await page.textContent("main p")).toContain("valid, duplicate, forged, tampered, stale, out-of-order and malformed notifications");
    expect(await page.inputValue("#check-merchant")).toBe(ACME.merchant_id);
    expect(await page.locator('#check-merchants option[value="M10002"]').count()).toBe(1);

    await check(`${correct.url}/notify`);
    expect(await page.textContent("#check-counts")).toBe("passes 16 probes: 16 pass, 0 warnings, 0 failures");
    expect(await verdicts()).toEqual(Object.fromEntries(PROBES.map((p) => [p.id, "pass"])));
    const valid = page.locator('#check-probes tr[data-probe="valid"] td');
    expect(await valid.allTextContents()).toEqual([
      "valid",
      "the payment's notification, signedexpects 2xx within 5 s",
      expect.stringMatching(/^200 in \d+ ms/),
      "pass",
      "as expected: 2xx within 5 s",
    ]);
    expect(await page.textContent('#check-probes tr[data-probe="wrong_key"] .check-answer')).toMatch(/^401 in \d+ ms/);
    expect(await page.locator("#check-stopped").count()).toBe(0);
    expect(new Set(correct.paths)).toEqual(new Set(["/notify"]));

    const id = (await page.textContent("#check-about code"))!;
    expect(id).toMatch(/^chk_/);
    await page.click("#check-notifications");
    await page.waitForURL(/\/ui\/notifications\?check=chk_/);
    expect(await page.textContent("#notifications-check")).toBe(id);
    const rows = page.locator("#notifications tbody tr");
    const sent = sandbox.deps.store.data.notifications.filter((n) => n.check === id);
    expect(sent.length).toBeGreaterThan(0);
    expect(await rows.count()).toBe(sent.length);
    for (const text of await rows.allTextContents()) expect(text).toContain(`receiver check ${id}`);
    expect(problems).toEqual([]);
  });

  test("a receiver that acknowledges everything: the forged and tampered probes fail, as red badges", async () => {
    await page.goto(`${sandbox.url}/__sandbox/ui/receiver-check`);
    await check(`${acceptsAll.url}/notify`);
    const counts = (await page.textContent("#check-counts"))!;
    expect(counts).toMatch(/^does not pass 16 probes: \d+ pass, \d+ warnings?, \d+ failures?$/);
    const got = await verdicts();
    for (const probe of FORGED_OR_TAMPERED) expect(got[probe], probe).toBe("fail");
    expect(got).toMatchObject({
      valid: "pass",
      duplicate: "pass",
      stale: "warning",
      malformed_json: "fail",
      empty_body: "fail",
      wrong_content_type: "warning",
    });
    expect(await page.getAttribute('#check-probes tr[data-probe="wrong_key"] .check-verdict', "class")).toBe("status bad check-verdict");
    expect(await page.getAttribute('#check-probes tr[data-probe="stale"] .check-verdict', "class")).toBe("status wait check-verdict");
    expect(await page.getAttribute('#check-probes tr[data-probe="valid"] .check-verdict', "class")).toBe("status ok check-verdict");
    expect(await page.textContent('#check-probes tr[data-probe="wrong_key"] .check-why')).toContain("anyone who can reach the URL can forge one");
    expect(await page.textContent('#check-probes tr[data-probe="out_of_order"] .check-answer')).toMatch(
      /^refund\.processed: 200 in \d+ ms.*payment\.captured: 200 in \d+ ms/,
    );
    await screenshot(page, "dashboard-receiver-check");
    expect(problems).toEqual([]);
  });

  test("a hostile URL stays text; an unreachable receiver is said once; the API's refusal is a message", async () => {
    const hostile = `${acceptsAll.url}/notify/<script>alert(1)</script>/"><img src=x onerror=alert(2)>`;
    await check(hostile);
    expect(await page.textContent("#check-about code:nth-of-type(2)")).toBe(hostile);
    expect(await page.locator("#check-probes tbody tr").count()).toBe(16);
    expect(await page.locator("#check-result script, #check-result img").count()).toBe(0);

    await check(`http://127.0.0.1:${await closedPort()}/notify`);
    expect(await page.textContent("#check-counts")).toBe("does not pass 16 probes: 0 pass, 0 warnings, 0 failures, 16 not run");
    expect(await page.textContent("#check-stopped")).toMatch(/^receiver unreachable: ECONNREFUSED\. Not run: valid, duplicate, /);
    expect(((await page.textContent("#check-result")) ?? "").match(/unreachable/g)).toHaveLength(1);
    expect(await page.locator("#check-probes").count()).toBe(0);

    await check(`${acceptsAll.url}/notify`, "M-<img src=x onerror=alert(3)>");
    expect(await page.textContent("#check-flash")).toMatch(
      /^Could not check http:\/\/127\.0\.0\.1:\d+\/notify: no merchant M-<img src=x onerror=alert\(3\)> in this Sandgate/,
    );
    expect(await page.locator("#check-summary").count()).toBe(0);
    expect(await page.locator("#check-message img").count()).toBe(0);
    // the refusal itself is the 400 the watcher notes; nothing else went wrong
    expect(problems.filter((p) => !/^400 .*\/__sandbox\/receiver-checks$/.test(p))).toEqual([]);
  });
});

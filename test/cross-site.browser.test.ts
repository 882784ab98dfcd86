// A hostile page on another site, opened by a tester whose browser can reach a shared Sandgate
// (no ADMIN_TOKEN, as by default): it frames the dashboard and auto-submits a form to every
// dashboard action and to the JSON API, in hidden frames, as soon as it loads (issue 27). In
// Chromium: the dashboard does not render in its frame, and nothing in the sandbox changes.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Browser } from "playwright-core";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { apmPayment, parseXml, textOf } from "./helpers.js";
import { CHROMIUM, HAS_CHROMIUM, launch } from "./browser-helpers.js";

/** The hostile site's name: mapped to 127.0.0.1 by Chromium's resolver, so no traffic leaves the machine. */
const EVIL = "evil.test";

describe.skipIf(!HAS_CHROMIUM)(`a hostile page in Chromium (needs ${CHROMIUM})`, () => {
  let sandbox: Sandbox;
  let browser: Browser;
  let hostile: Server;
  let hostileUrl = "";
  let pending = "";

  const api = async (path: string) => (await fetch(`${sandbox.url}${path}`)).json() as Promise<Record<string, unknown>>;
  async function state() {
    const scenarios = await api("/__sandbox/scenarios");
    const clock = await api("/__sandbox/clock");
    const { transactions } = (await api("/__sandbox/transactions")) as { transactions: { transaction_id: string; state: string }[] };
    return {
      global: scenarios.global,
      bindings: scenarios.bindings,
      offset: clock.offset_ms,
      transactions: transactions.map((t) => `${t.transaction_id}:${t.state}`).sort(),
    };
  }

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "hostile" });
    const body = apmPayment();
    const res = await fetch(`${sandbox.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(textOf(parseXml(await res.text()).issuer_url)).toContain("/pay/apm/");
    const { transactions } = (await api(`/__sandbox/transactions?order_no=${String(body.order_no)}`)) as { transactions: { transaction_id: string }[] };
    pending = transactions[0]!.transaction_id; // waits at its APM page
    const target = sandbox.url;
    // every dashboard action, each in a hidden frame of its own (one frame would cancel the one before)
    const forms: [string, Record<string, string>, string?][] = [
      ["/__sandbox/ui/scenarios/global", { name: "declines" }],
      ["/__sandbox/ui/scenarios/bind", { merchant_id: "M10001", name: "3ds" }],
      ["/__sandbox/ui/clock", { advance: "2d" }],
      ["/__sandbox/ui/reset", { merchant_id: "", confirm: "yes" }],
      [`/__sandbox/ui/payments/${pending}/complete`, { outcome: "paid" }],
      ["/__sandbox/reset", { merchant_id: "" }],
      ["/__sandbox/clock", { '{"advance":"2d","x":"': '"}' }, "text/plain"],
      [`/__sandbox/payments/${pending}/complete`, { '{"outcome":"paid","x":"': '"}' }, "text/plain"],
    ];
    const html = `<!doctype html><title>Win a prize</title>
<iframe id="framed" src="${target}/__sandbox/" width="900" height="600"></iframe>
${forms
  .map(
    ([action, fields, enctype], i) =>
      `<iframe name="sink${i}" onload="window.loaded=(window.loaded||0)+1"></iframe><form target="sink${i}" method="post" action="${target}${action}"${enctype ? ` enctype="${enctype}"` : ""}>${Object.entries(
        fields,
      )
        .map(([k, v]) => `<input type="hidden" name='${k}' value='${v}'>`)
        .join("")}</form>`,
  )
  .join("\n")}
<script>
fetch(${JSON.stringify(`${target}/__sandbox/reset`)}, { method: "POST", mode: "no-cors", body: "{}" }).finally(() => (window.fetched = true));
for (const form of document.forms) form.submit();
</script>`;
    hostile = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(html));
    await new Promise<void>((resolve) => hostile.listen(0, "127.0.0.1", resolve));
    hostileUrl = `http://${EVIL}:${(hostile.address() as AddressInfo).port}/`;
    browser = await launch([`--host-resolver-rules=MAP ${EVIL} 127.0.0.1`]);
    return;
  });
  afterAll(async () => {
    await browser?.close();
    hostile?.close();
    await sandbox?.close();
  });

  test("auto-submitted forms to every dashboard action and to the API change nothing; the dashboard does not render framed", async () => {
    const before = await state();
    expect(before.transactions).toContain(`${pending}:pending`);
    const page = await browser.newPage();
    await page.goto(hostileUrl);
    // every form's answer has come back into its frame (8 sinks, 0 at first load each), and the fetch is done
    await page.waitForFunction("window.loaded >= 16 && window.fetched === true", undefined, { timeout: 10_000 });
    expect(await state()).toEqual(before);

    // the framed dashboard was refused by the browser: no frame shows its controls
    for (const frame of page.frames()) expect(await frame.$("#global-scenario"), frame.url()).toBeNull();
    // (opened as a page of its own, it does)
    const direct = await browser.newPage();
    await direct.goto(`${sandbox.url}/__sandbox/`);
    expect(await direct.$("#global-scenario")).not.toBeNull();
  });
});

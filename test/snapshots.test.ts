// QA snapshots: a prepared state kept under a name and put back after a test run changed it, through
// the operator API, sandgate ctl, and the dashboard in Chromium; kept where the state is kept (in
// memory, beside a --data file across a restart).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, describe, expect, test } from "vitest";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { runSandgate } from "../scripts/sandgate-process.js";
import { CHROMIUM, HAS_CHROMIUM, launch, screenshot, watchedPage } from "./browser-helpers.js";
import { ACME, directPayment, nextOrderNo, parseXml, textOf } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-snapshots-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function pay(sandbox: Sandbox, merchant: Record<string, string> = {}) {
  const body = directPayment({ order_no: nextOrderNo("SNAP"), ...merchant });
  const res = await fetch(`${sandbox.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { order_no: String(body.order_no), transaction_id: textOf(parseXml(await res.text()).transaction_id) };
}
const orders = async (sandbox: Sandbox, merchant_id?: string) =>
  (await sandbox.admin.transactions(merchant_id ? { merchant_id } : {})).map((t) => t.order_no).sort();

describe("snapshots through the operator API and sandgate ctl", () => {
  test("save, change, restore: the state is as saved; one merchant's snapshot leaves the others; list, delete, refusals", async () => {
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "snapshots" });
    try {
      await pay(sandbox);
      const saved = await orders(sandbox);
      const { snapshot } = await sandbox.admin.call("saveSnapshot", { params: { name: "prepared" }, body: {} });
      expect(snapshot).toMatchObject({ name: "prepared", merchant: null });
      expect(snapshot.records).toBeGreaterThan(saved.length);
      const after = await pay(sandbox);
      expect(await orders(sandbox)).toContain(after.order_no);
      // a snapshot of every merchant replaces every team's records: that is said, never the default
      await expect(sandbox.admin.call("restoreSnapshot", { params: { name: "prepared" } })).rejects.toMatchObject({ status: 400, error: "all_required" });
      expect(await orders(sandbox)).toContain(after.order_no);
      await sandbox.admin.call("restoreSnapshot", { params: { name: "prepared" }, body: { all: true } });
      expect(await orders(sandbox)).toEqual(saved);

      // one merchant's: another merchant's payment made since stays
      const other = { merchant_id: "SNAP-OTHER", account_id: "A1" };
      await sandbox.admin.call("saveSnapshot", { params: { name: "acme-only" }, body: { merchant_id: ACME.merchant_id } });
      const acmeLater = await pay(sandbox);
      const otherLater = await pay(sandbox, other);
      await sandbox.admin.call("restoreSnapshot", { params: { name: "acme-only" } });
      expect(await orders(sandbox, ACME.merchant_id)).not.toContain(acmeLater.order_no);
      expect(await orders(sandbox, other.merchant_id)).toEqual([otherLater.order_no]);

      const { snapshots } = await sandbox.admin.call("listSnapshots");
      expect(snapshots.map((s) => s.name).sort()).toEqual(["acme-only", "prepared"]);
      expect(await sandbox.admin.call("deleteSnapshot", { params: { name: "prepared" } })).toEqual({ deleted: "prepared" });
      await expect(sandbox.admin.call("restoreSnapshot", { params: { name: "prepared" }, body: { all: true } })).rejects.toMatchObject({
        status: 404,
        error: "snapshot_not_found",
      });
      await expect(sandbox.admin.call("saveSnapshot", { params: { name: "no spaces" }, body: {} })).rejects.toMatchObject({
        status: 400,
        error: "invalid_name",
      });
      await expect(sandbox.admin.call("saveSnapshot", { params: { name: "x" }, body: { merchant_id: "NOBODY" } })).rejects.toMatchObject({
        status: 404,
        error: "merchant_not_found",
      });
    } finally {
      await sandbox.close();
    }
  });

  test("a list reads each snapshot's header and count from its two ends: a kept file larger than what is read of it lists right", async () => {
    const data = join(dir, "large.json");
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "snapshots-large", data });
    try {
      for (let i = 0; i < 12; i++) await Promise.all(Array.from({ length: 10 }, () => pay(sandbox)));
      const { snapshot } = await sandbox.admin.call("saveSnapshot", { params: { name: "large" }, body: {} });
      const kept = readFileSync(join(`${data}.snapshots`, "large.ndjson"), "utf8");
      expect(kept.length).toBeGreaterThan(2 * 64 * 1024);
      const count = Number(/\{"end":\{"records":(\d+)\}\}\n$/.exec(kept)![1]);
      expect(snapshot.records).toBe(count);
      const { snapshots } = await sandbox.admin.call("listSnapshots");
      expect(snapshots).toEqual([{ name: "large", merchant: null, saved_at: JSON.parse(kept.slice(0, kept.indexOf("\n"))).exported_at, records: count }]);
    } finally {
      await sandbox.close();
    }
  });

  test("with --data the snapshots are kept beside the file and survive a restart; ctl saves, lists, restores, deletes", async () => {
    const data = join(dir, "state.json");
    const first = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "snapshots-data", data });
    const env = { SANDGATE_URL: first.url, ADMIN_TOKEN: "" };
    await pay(first);
    const saved = await orders(first);
    const made = await runSandgate(["ctl", "snapshot", "save", "before-run"], { env });
    expect(made.stdout).toMatch(/^snapshot before-run: \d+ records of every merchant/);
    await first.close();

    const second = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "snapshots-data", data });
    try {
      const env2 = { SANDGATE_URL: second.url, ADMIN_TOKEN: "" };
      await pay(second);
      expect((await runSandgate(["ctl", "snapshot", "list"], { env: env2 })).stdout).toMatch(/^before-run {2}\S+ {2}\d+ records {2}every merchant/);
      const unsaid = await runSandgate(["ctl", "snapshot", "restore", "before-run"], { env: env2 });
      expect([unsaid.code, unsaid.stderr]).toEqual([3, expect.stringContaining("all_required")]);
      expect((await runSandgate(["ctl", "snapshot", "restore", "before-run", "--all"], { env: env2 })).stdout).toMatch(/^restored snapshot before-run/);
      expect(await orders(second)).toEqual(saved);
      expect((await runSandgate(["ctl", "snapshot", "delete", "before-run"], { env: env2 })).stdout).toBe("deleted snapshot before-run\n");
      const gone = await runSandgate(["ctl", "snapshot", "restore", "before-run", "--all"], { env: env2 });
      expect(gone.code).toBe(3);
      expect(gone.stderr).toMatch(/snapshot_not_found/);
    } finally {
      await second.close();
    }
  }, 30_000);
});

describe.skipIf(!HAS_CHROMIUM)(`snapshots on the dashboard in Chromium (needs ${CHROMIUM})`, () => {
  let browser: Browser | undefined;
  afterAll(() => browser?.close());

  test("a tester saves a snapshot, a payment changes the state, Restore puts it back", async () => {
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "snapshots-browser" });
    try {
      browser = await launch();
      const { page, problems }: { page: Page; problems: string[] } = await watchedPage(browser);
      await pay(sandbox);
      const saved = await orders(sandbox);
      await page.goto(`${sandbox.url}/__sandbox/`);
      await page.fill("#snapshot-name", "qa-prepared");
      await page.click("#save-snapshot");
      expect((await page.textContent("#flash"))?.trim()).toMatch(/^Snapshot qa-prepared saved: \d+ records of every merchant\.$/);
      expect(await page.textContent("#snapshots-table")).toContain("qa-prepared");
      await screenshot(page, "dashboard-snapshots");

      const later = await pay(sandbox);
      expect(await orders(sandbox)).toContain(later.order_no);
      await page.click('[data-action="restore-qa-prepared"]');
      expect((await page.textContent("#flash"))?.trim()).toMatch(/^Snapshot qa-prepared restored/);
      expect(await orders(sandbox)).toEqual(saved);

      await page.click('[data-action="delete-qa-prepared"]');
      expect((await page.textContent("#flash"))?.trim()).toBe("Snapshot qa-prepared deleted.");
      expect(await page.textContent("#snapshots-table")).not.toContain("qa-prepared");
      expect(problems).toEqual([]);
    } finally {
      await sandbox.close();
    }
  }, 30_000);
});

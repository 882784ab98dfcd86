// A sandbox's state moved as a file (GET/PUT /__sandbox/state, `sandgate ctl state`): what one
// Sandgate exports, another (in memory or with --data) imports and goes on with; a file that is not
// whole or not one is refused with its line and reason, and nothing changes.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { afterAll, describe, expect, test } from "vitest";
import type { App } from "../src/server/app.js";
import { startSandbox } from "../src/index.js";
import { runSandgate } from "../scripts/sandgate-process.js";
import { HAS_REDIS, startRedis } from "../scripts/redis-server.js";
import { FIXTURE_MERCHANT, Gateway } from "../scripts/self-check/traffic.js";
import { goldenDir, type GoldenExpected } from "./earlier-formats.js";
import { ACME, makeApp } from "./helpers.js";
import { blockHolding } from "./docs-helpers.js";
import { one, paymentIn, paymentStatus } from "./lifecycle-helpers.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-state-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const exported = async (app: App, merchant?: string) => {
  const res = await request(app)
    .get("/__sandbox/state")
    .query(merchant ? { merchant_id: merchant } : {});
  expect(res.status).toBe(200);
  expect(res.type).toBe("application/x-ndjson");
  return res.text;
};
/** `all`: the caller says a file of every merchant may replace every merchant's records */
const imported = (app: App, file: string, all = true) =>
  request(app)
    .put("/__sandbox/state")
    .query(all ? { all: "true" } : {})
    .set("content-type", "application/x-ndjson")
    .send(file);
/** A file's record lines, sorted: what two exports of the same records share, whatever order their store lists them in. */
const recordLines = (file: string) => file.split("\n").slice(1).sort();
const headerOf = (file: string) =>
  JSON.parse(file.slice(0, file.indexOf("\n"))) as { clock_offset_ms: number; merchant: string | null; counters: Record<string, number> };
/** The file without the moment it was written: what two exports of the same state share. */
const content = (file: string) => file.replace(/"exported_at":"[^"]*",/, "");

describe("a state moved between sandboxes", () => {
  test("memory → file → --data → file: the two files hold the same; the payments go on where they were", async () => {
    const { app: from } = await makeApp({ seed: "state-a" });
    const authorised = await paymentIn(from, "authorised");
    const paid = await paymentIn(from, "paid");
    expect((await one(from, "refund", { ...paid, refund_amount: "30.00" })).refund_status).toBe("1");
    await request(from).post("/__sandbox/clock").send({ advance: "2h" });
    const file = await exported(from);
    expect(file.split("\n")[0]).toMatch(/^\{"sandgate_state":1,"merchant":null,/);
    expect(file).toMatch(/\{"end":\{"records":\d+\}\}\n$/);

    const { app: to, deps } = await makeApp({ seed: "state-b", data: join(dir, "b.json") });
    // a file of every merchant replaces every team's records: that is said, never the default
    const unsaid = await imported(to, file, false);
    expect([unsaid.status, unsaid.body.error]).toEqual([400, "all_required"]);
    const answer = await imported(to, file);
    expect(answer.status).toBe(200);
    expect(answer.body.merchant).toBeNull();
    expect(answer.body.records.transactions).toBeGreaterThanOrEqual(2);
    expect(content(await exported(to))).toBe(content(file));
    expect(deps.clock.offsetMs()).toBeGreaterThanOrEqual(2 * 3600_000); // the clock came too

    // the imported payments go on: the authorised one captures, the refund counts toward what is left
    expect(await paymentStatus(to, authorised.transaction_id)).toBe(await paymentStatus(from, authorised.transaction_id));
    expect((await one(to, "capture", authorised)).capture_status).toBe("1");
    expect((await one(to, "refund", { ...paid, refund_amount: "80.00" })).refund_status).toBe("0"); // 70.00 left
    expect((await one(to, "refund", { ...paid, refund_amount: "70.00" })).refund_status).toBe("1");
  });

  test("one merchant's file replaces that merchant's records only", async () => {
    const { app: from } = await makeApp({ seed: "state-c" });
    const moved = await paymentIn(from, "authorised");
    const file = await exported(from, ACME.merchant_id);
    expect(file.split("\n")[0]).toContain(`"merchant":"${ACME.merchant_id}"`);
    expect(file).not.toMatch(/"merchant_id":"(?!M10001)/);

    const { app: to } = await makeApp({ seed: "state-d" });
    const before = await exported(to);
    const answer = await imported(to, file);
    expect(answer.body.merchant).toBe(ACME.merchant_id);
    expect(await paymentStatus(to, moved.transaction_id)).toBe(await paymentStatus(from, moved.transaction_id));
    // every other merchant's lines are as they were
    const others = (f: string) => f.split("\n").filter((l) => l.startsWith('{"c"') && !l.includes(`"merchant_id":"${ACME.merchant_id}"`));
    expect(others(await exported(to))).toEqual(others(before));
  });

  test("a file over 64 MB is refused (413) before it is read, and nothing changes", async () => {
    const { app } = await makeApp({ seed: "state-large" });
    const before = await exported(app);
    const res = await request(app)
      .put("/__sandbox/state")
      .query({ all: "true" })
      .set("content-type", "application/x-ndjson")
      .send(Buffer.alloc(64 * 1024 * 1024 + 1, 0x61));
    expect([res.status, res.body]).toEqual([413, { error: "body_too_large", message: "the file is larger than 64MB" }]);
    expect(content(await exported(app))).toBe(content(before));
  });

  test("a file that is not whole, not one, or of another version is refused with its line and reason; nothing changes", async () => {
    const { app } = await makeApp({ seed: "state-e" });
    await paymentIn(app, "paid");
    const file = await exported(app);
    const lines = file.trimEnd().split("\n");
    const bad: [string, string, RegExp][] = [
      ["empty", "", /line 1: the file is empty/],
      ["not JSON", "hello\n", /line 1: not JSON/],
      ["foreign", '{"log":{"version":"1.2"}}\n', /line 1: not a Sandgate state file/],
      ["newer version", file.replace('"sandgate_state":1', '"sandgate_state":2'), /line 1: format version 2: this Sandgate reads version 1/],
      ["cut short", `${lines.slice(0, -3).join("\n")}\n`, /ends before its end line/],
      ["miscounted", `${lines.slice(0, -2).join("\n")}\n${lines.at(-1)}\n`, /the end line counts \d+ records, the file holds \d+/],
      ["a record without its key", file.replace(/"transaction_id":"\d+",/, ""), /line \d+: a transactions record without its transaction_id/],
      ["a record of the wrong shape", file.replace(/"amount":"100\.00"/, '"amount":"lots"'), /line \d+: transactions \d+: amount/],
    ];
    const before = content(await exported(app));
    for (const [what, body, said] of bad) {
      const res = await imported(app, body);
      expect(res.status, what).toBe(400);
      expect(res.body.error, what).toBe("invalid_state_file");
      expect(res.body.message, what).toMatch(said);
    }
    expect(content(await exported(app))).toBe(before);
  });
});

test("docs/state.md shows the file as an export writes it: the header's fields, record lines, the end line", async () => {
  const shown = blockHolding("docs/state.md", [""], '{"sandgate_state":1').text.trim().split("\n");
  const { app } = await makeApp({ seed: "state-doc" });
  const real = (await exported(app)).trimEnd().split("\n");
  const keysOf = (line: string) => Object.keys(JSON.parse(line.replace(/…/g, "0").replace(/\{0\}/g, "{}")) as object);
  expect(keysOf(shown[0]!)).toEqual(keysOf(real[0]!));
  expect(keysOf(real.at(-1)!)).toEqual(["end"]);
  expect(shown.at(-1)).toMatch(/^\{"end":\{"records":\d+\}\}$/);
  const collections = new Set(real.slice(1, -1).map((l) => (JSON.parse(l) as { c: string }).c));
  for (const line of shown.slice(1, -1).filter((l) => l.startsWith('{"c"'))) expect(collections).toContain(/"c":"(\w+)"/.exec(line)![1]);
});

test("sandgate ctl state export and import through a running Sandgate", async () => {
  const from = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "ctl-a" });
  const to = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "ctl-b" });
  try {
    await request(from.url)
      .post("/v1/authorise")
      .send({
        merchant_id: ACME.merchant_id,
        account_id: ACME.account_id,
        order_no: "STATE-CTL-1",
        amount: "12.00",
        currency: "USD",
        card: "4242424242424242",
        expiration_month: "12",
        expiration_year: "2035",
        security_code: "123",
        encryption_data: "a".repeat(64),
      });
    const file = join(dir, "moved", "state.ndjson");
    const out = await runSandgate(["ctl", "state", "export", "--out", file, "--url", from.url], { env: { SANDGATE_URL: "", ADMIN_TOKEN: "" } });
    expect(out.stderr).toBe("");
    expect(out.stdout).toMatch(/^wrote \d+ records to /);
    const done = await runSandgate(["ctl", "state", "import", file, "--all", "--url", to.url], { env: { SANDGATE_URL: "", ADMIN_TOKEN: "" } });
    expect(done.stdout).toMatch(/^imported \d+ records: the whole state was replaced/);
    expect((await to.admin.transactions({ order_no: "STATE-CTL-1" })).map((t) => t.amount)).toEqual(["12.00"]);
    writeFileSync(join(dir, "cut.ndjson"), "{}\n");
    const refused = await runSandgate(["ctl", "state", "import", join(dir, "cut.ndjson"), "--url", to.url], { env: { SANDGATE_URL: "", ADMIN_TOKEN: "" } });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/invalid_state_file.*line 1/);
  } finally {
    await Promise.all([from.close(), to.close()]);
  }
}, 30_000);

describe.skipIf(!HAS_REDIS)("sandgate state export|import with no Sandgate running", () => {
  test(
    "--data → file → Redis → file → a new --data: the files hold the same, a bad file exits 1 and changes nothing, and a server started on the result finds the payments",
    { timeout: 60_000 },
    async () => {
      const data = join(dir, "offline");
      cpSync(goldenDir("unversioned", "data"), data, { recursive: true });
      const redis = await startRedis();
      try {
        const a = join(dir, "offline-a.ndjson");
        const fromData = await runSandgate(["state", "export", "--data", join(data, "state.json"), "--out", a]);
        expect([fromData.code, fromData.stderr]).toEqual([0, expect.stringMatching(/^exported \d+ records \(every merchant\) to .*offline-a\.ndjson\n$/)]);

        const unsaid = await runSandgate(["state", "import", a, "--redis-url", redis.url]);
        expect([unsaid.code, unsaid.stderr]).toEqual([
          1,
          "sandgate state import: the file holds every merchant: importing it replaces every merchant's records and the clock; say so with --all\n",
        ]);
        const into = await runSandgate(["state", "import", a, "--all", "--redis-url", redis.url]);
        expect([into.code, into.stderr]).toEqual([0, expect.stringMatching(/^imported \d+ records \(every merchant\) into Redis\n$/)]);
        const fromRedis = await runSandgate(["state", "export", "--redis-url", redis.url]);
        // the same records (Redis lists merchants in another order), the clock, and ids counted on from where they were
        expect(recordLines(fromRedis.stdout)).toEqual(recordLines(readFileSync(a, "utf8")));
        expect(headerOf(fromRedis.stdout)).toMatchObject({ clock_offset_ms: 0, merchant: null, counters: headerOf(readFileSync(a, "utf8")).counters });

        const truncated = join(dir, "offline-truncated.ndjson");
        writeFileSync(truncated, fromRedis.stdout.split("\n").slice(0, 5).join("\n"));
        const refused = await runSandgate(["state", "import", truncated, "--all", "--redis-url", redis.url]);
        expect([refused.code, refused.stderr]).toEqual([1, "sandgate state import: line 5: the file ends before its end line (cut short?)\n"]);
        expect(content((await runSandgate(["state", "export", "--redis-url", redis.url])).stdout)).toBe(content(fromRedis.stdout));

        const b = join(dir, "offline-b.ndjson");
        writeFileSync(b, fromRedis.stdout);
        expect((await runSandgate(["state", "import", b, "--all", "--data", join(dir, "offline-new.json")])).code).toBe(0);
        const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", data: join(dir, "offline-new.json") });
        try {
          const expected = JSON.parse(readFileSync(join(goldenDir("unversioned", "data"), "expected.json"), "utf8")) as GoldenExpected;
          const answer = JSON.parse(
            await new Gateway(sandbox.url, FIXTURE_MERCHANT).call("retrievalTrans", { account_id: "A10001", order_no: "SELF-0001,SELF-0007" }, true),
          ) as { orders_list: Record<string, string>[] };
          expect(answer.orders_list).toEqual([expected.answers.payments["SELF-0001"], expected.answers.payments["SELF-0007"]]);
        } finally {
          await sandbox.close();
        }
      } finally {
        await redis.close();
      }
    },
  );
});

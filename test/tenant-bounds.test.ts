// Bounded tenants (docs/security.md): no identifier is longer than 64 characters, no merchant has
// more accounts than --max-accounts, and attempts past the cap cost what any refusal costs: another
// merchant's payments go on beside them (their latency: npm run bench). Runs on one process (--data), on one Redis and on a Cluster.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { afterAll, describe, expect, test } from "vitest";
import { spawnSandgate, type SandgateProcess } from "../scripts/sandgate-process.js";
import { directPayment, errorFields, makeApp, parseXml, textOf } from "./helpers.js";
import { inject } from "vitest";
import { freshPrefix, redisClient, redisFlags, REPLICA_MODE } from "./replica-helpers.js";
import { STREAM_BYTES } from "../src/store/redis/redis-scripts.js";

const where = !REPLICA_MODE ? "with --data" : inject("redisCluster") ? "on a Cluster" : "on Redis";
const ENVELOPE = { encryption_data: "a".repeat(64) };

describe(`identifiers and accounts are bounded (${where})`, () => {
  test("an identifier over 64 characters is refused in the operation's own format, and nothing is provisioned", async () => {
    const { app } = await makeApp();
    const long = "M".repeat(65);
    const huge = "A".repeat(300_000);
    const xml = await request(app)
      .post("/v1/authorise")
      .send(directPayment({ merchant_id: long, account_id: "A1" }))
      .expect(400);
    expect(textOf(parseXml(xml.text).result_info)).toBe("I0002:Invalid field: merchant_id must be at most 64 characters");
    expect(errorFields(xml.text)).toEqual(["merchant_id"]);
    const json = await request(app)
      .post("/v1/retrievalTrans")
      .send({ ...ENVELOPE, merchant_id: "M10001", account_id: huge })
      .expect(400);
    expect(json.body).toMatchObject({ return_status: "0", errors: [{ field: "account_id", message: "must be at most 64 characters" }] });
    // the refusal echoes what it was sent, but the request log and the records keep no account
    for (const [path, orders] of [
      ["/v1/capture", "capture_orders"],
      ["/v1/refund", "refund_orders"],
    ] as const) {
      const batch = await request(app)
        .post(path)
        .send({
          ...ENVELOPE,
          merchant_id: "M10001",
          account_id: "A10001",
          [orders]: [{ transaction_id: "1".repeat(65), order_no: "X", currency: "USD", amount: "1.00", refund_amount: "1.00" }],
        });
      expect(JSON.stringify(batch.body), path).toContain("must be at most 64 characters");
    }
    await request(app).get(`/__sandbox/merchants/${long}`).expect(404);
    const accounts = (await request(app).get("/__sandbox/merchants/M10001").expect(200)).body.merchant.accounts.map(
      (a: { account_id: string }) => a.account_id,
    );
    expect(accounts).toEqual(["A10001", "A10002"]);
    // exactly 64 is taken
    await request(app)
      .post("/v1/authorise")
      .send(directPayment({ merchant_id: "M".repeat(64), account_id: "A".repeat(64) }))
      .expect(200);
  });

  test("--max-accounts: the next account is refused with I0015 and provisions nothing; the merchant's accounts keep working", async () => {
    const { app } = await makeApp({ maxAccounts: 3 });
    for (const account of ["A1", "A2", "A3"])
      await request(app)
        .post("/v1/authorise")
        .send(directPayment({ merchant_id: "CAPPED", account_id: account }))
        .expect(200);
    const refused = await request(app)
      .post("/v1/authorise")
      .send(directPayment({ merchant_id: "CAPPED", account_id: "A4" }))
      .expect(409);
    expect(textOf(parseXml(refused.text).result_info)).toMatch(/^I0015:Too many accounts for this merchant: merchant "CAPPED" has 3 accounts/);
    const query = await request(app)
      .post("/v1/retrievalTrans")
      .send({ ...ENVELOPE, merchant_id: "CAPPED", account_id: "A5" })
      .expect(409);
    expect(query.body.return_message).toMatch(/^I0015:/);
    await request(app)
      .post("/v1/authorise")
      .send(directPayment({ merchant_id: "CAPPED", account_id: "A2" }))
      .expect(200);
    const accounts = (await request(app).get("/__sandbox/merchants/CAPPED").expect(200)).body.merchant.accounts.map(
      (a: { account_id: string }) => a.account_id,
    );
    expect(accounts).toEqual(["A1", "A2", "A3"]);
    // another merchant is not held by this one's cap
    await request(app)
      .post("/v1/authorise")
      .send(directPayment({ merchant_id: "OTHER", account_id: "A4" }))
      .expect(200);
  });
});

const running: SandgateProcess[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const p of running) p.child.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe(`account attempts past the cap (${where}, the server in its own process)`, () => {
  test("all refused, the merchant keeps its 100 accounts, and another merchant's payments beside them are all answered", { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-bounds-"));
    dirs.push(dir);
    const prefix = freshPrefix();
    const place = REPLICA_MODE ? redisFlags(prefix) : ["--data", join(dir, "state.json")];
    const proc = spawnSandgate(["--port", "0", "--host", "127.0.0.1", "--seed", "bounds", ...place]);
    running.push(proc);
    const url = await proc.url;
    const post = async (path: string, body: Record<string, unknown>) => {
      const res = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      await res.arrayBuffer();
      return res.status;
    };
    // the attacker's merchant fills its 100 accounts, of ids as long as they may be
    const account = (i: number) => `ACC-${i}-`.padEnd(64, "x");
    for (let i = 0; i < 100; i++) expect(await post("/v1/retrievalTrans", { ...ENVELOPE, merchant_id: "ATTACKER", account_id: account(i) })).toBe(200);
    if (REPLICA_MODE) {
      // its changes stream (each entry the ~40 KB merchant whole, 2 MB for the 100) keeps about a megabyte
      const redis = await redisClient();
      const entries = await redis.xrange(`${prefix}m:{ATTACKER}:changes`, "-", "+");
      redis.disconnect();
      const bytes = entries.reduce((sum, [, fields]) => sum + fields.join("").length, 0);
      expect(entries.length).toBeLessThan(100);
      expect(bytes).toBeLessThan(1.2 * STREAM_BYTES);
    }

    /** TEAM-B pays one payment after another until `until` settles (10 at least): how many it paid. */
    const teamB = async (until: Promise<unknown>) => {
      let done = false;
      void until.then(() => (done = true));
      let paid = 0;
      while (!done || paid < 10) {
        expect(await post("/v1/authorise", directPayment({ merchant_id: "TEAM-B", account_id: "B1", amount: "10.00" }))).toBe(200);
        paid++;
      }
      return paid;
    };
    /** `total` requests from the attacker, `inFlight` at a time, each answered with `status`. */
    const flood = async (total: number, inFlight: number, body: (i: number) => [string, Record<string, unknown>], status: number) => {
      let next = 0;
      const statuses = new Map<number, number>();
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (next < total) {
            const [path, b] = body(next++);
            const got = await post(path, b);
            statuses.set(got, (statuses.get(got) ?? 0) + 1);
          }
        }),
      );
      expect(Object.fromEntries(statuses)).toEqual({ [status]: total });
    };
    // 1,000 new accounts (I0015) beside TEAM-B's payments: every one refused, every payment made
    // (TEAM-B's latency beside 20,000 of them, against the same rate of other refusals: npm run bench)
    let refused = 0;
    const attack = flood(1_000, 2, () => ["/v1/retrievalTrans", { ...ENVELOPE, merchant_id: "ATTACKER", account_id: `NEW-${refused++}` }], 409);
    expect(await teamB(attack)).toBeGreaterThanOrEqual(10);
    expect(refused).toBe(1_000);
    const accounts = (await (await fetch(`${url}/__sandbox/merchants/ATTACKER`)).json()) as { merchant: { accounts: unknown[] } };
    expect(accounts.merchant.accounts).toHaveLength(100);
  });
});

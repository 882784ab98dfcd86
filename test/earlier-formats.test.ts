// Today's Sandgate started on what each earlier Sandgate wrote (the golden copies made by those
// commits' own code, test/earlier-formats.ts): every payment and refund answers as the earlier one
// answered, and the sandbox goes on where it stopped: an authorised payment captures, earlier
// refunds count toward what is refundable, the card on file pays, the pending notifications are
// delivered and the subscription left active charges when its month comes.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { STATE_VERSION } from "../src/domain/types.js";
import { HAS_REDIS, startRedis, type TestRedis } from "../scripts/redis-server.js";
import { FIXTURE_MERCHANT, Gateway, xmlText } from "../scripts/self-check/traffic.js";
import { EARLIER_FORMATS, GOLDEN_NOTIFY_PORT, earlierTree, goldenDir, type GoldenExpected } from "./earlier-formats.js";
import { runSandgate, spawnSandgate } from "../scripts/sandgate-process.js";
import { startReceiver, type Receiver } from "./receiver.js";
import { REDIS_LAYOUT } from "../src/store/redis/redis-layout.js";

/** Restores a dump written by scripts/earlier-formats.ts into an empty Redis. */
async function restoreRedis(url: string, dump: Record<string, { type: string; value: unknown }>): Promise<void> {
  const client = new Redis(url);
  try {
    for (const [key, { type, value }] of Object.entries(dump)) {
      if (type === "string") await client.set(key, value as string);
      else if (type === "hash") await client.hset(key, value as Record<string, string>);
      else if (type === "set") await client.sadd(key, ...(value as string[]));
      else if (type === "zset") {
        const flat = value as string[];
        for (let i = 0; i < flat.length; i += 2) await client.zadd(key, flat[i + 1]!, flat[i]!);
      } else if (type === "list") await client.rpush(key, ...(value as string[]));
      else if (type === "stream") for (const [id, fields] of value as [string, string[]][]) await client.xadd(key, id, ...fields);
    }
  } finally {
    client.disconnect();
  }
}

const json = (text: string) => JSON.parse(text) as Record<string, unknown>;

/**
 * A payment as the earlier Sandgate answered it, as time has left it since: a subscription whose
 * next deduction has come (GOLD-0002's, a month after the copy was made) has charged and moved it on.
 */
function asTimeLeftIt(payment: Record<string, unknown>): Record<string, unknown> {
  const sub = payment.subscription_result as Record<string, string> | undefined;
  if (sub?.recurring_status !== "1" || Date.parse(`${sub.recurring_deduction_time!.replace(" ", "T")}Z`) > Date.now()) return payment;
  return { ...payment, subscription_result: { ...sub, recurring_deduction_time: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/) } };
}
/** yyyyMMddHHmmss (UTC) in ms */
const utc = (stamp: string) =>
  Date.UTC(+stamp.slice(0, 4), +stamp.slice(4, 6) - 1, +stamp.slice(6, 8), +stamp.slice(8, 10), +stamp.slice(10, 12), +stamp.slice(12, 14));

describe.each(EARLIER_FORMATS.flatMap((f) => f.engines.map((engine) => ({ ...f, engine }))))("today's Sandgate on $name ($engine): $about", (format) => {
  const dir = goldenDir(format.name, format.engine);
  const expected = JSON.parse(readFileSync(join(dir, "expected.json"), "utf8")) as GoldenExpected;
  let sandbox: Sandbox | undefined;
  let redis: TestRedis | undefined;
  let work: string | undefined;
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await sandbox?.close();
    await redis?.close();
    if (work) rmSync(work, { recursive: true, force: true });
    await receiver?.close();
    sandbox = redis = work = receiver = undefined;
  });

  async function start(): Promise<Sandbox> {
    if (format.engine === "data") {
      work = mkdtempSync(join(tmpdir(), "sandgate-earlier-"));
      cpSync(dir, work, { recursive: true });
      return (sandbox = await startSandbox({ port: 0, host: "127.0.0.1", data: join(work, "state.json") }));
    }
    redis = await startRedis();
    await restoreRedis(redis.url, JSON.parse(readFileSync(join(dir, "redis.json"), "utf8")) as Record<string, { type: string; value: unknown }>);
    return (sandbox = await startSandbox({ port: 0, host: "127.0.0.1", redisUrl: redis.url }));
  }

  /** Every payment and refund answers as the earlier Sandgate answered, as time has left them. */
  async function answersAsBefore(): Promise<void> {
    const gw = new Gateway((await start()).url, FIXTURE_MERCHANT);
    for (const [account, orders] of Object.entries({
      A10001: ["SELF-0001", "SELF-0002", "SELF-0004", "SELF-0005", "SELF-0006", "SELF-0007", "SELF-0008", "SELF-0009", "SELF-0011", "SELF-0015"],
      A10002: ["SELF-0003", "SELF-0010", "SELF-0012", "SELF-0013", "SELF-0014", "GOLD-0001", "GOLD-0002"],
    })) {
      const answer = json(await gw.call("retrievalTrans", { account_id: account, order_no: orders.join(",") }, true));
      const found = Object.fromEntries((answer.orders_list as Record<string, string>[]).map((o) => [o.order_no, o]));
      for (const order of orders) expect(found[order], order).toEqual(asTimeLeftIt(expected.answers.payments[order]!));
    }
    // a refund still accepted then (SELF-0003's 30.17 settles an hour after it was accepted) has
    // settled since if its hour has passed: processed, with its processing date and acquirer reference; nothing else moves
    for (const [order, refunds] of Object.entries(expected.answers.refunds)) {
      const answer = json(await gw.call("retrievalRefund", { account_id: "A10002", order_no: order }, true));
      const settledSince = (r: Record<string, string>) =>
        r.refund_status === "1" && (r.refund_amount ?? "").endsWith(".17") && Date.now() > utc(r.refund_date ?? "") + 3_600_000;
      const now = refunds.map((r) =>
        settledSince(r)
          ? { ...r, refund_status: "2", refund_processing_date: expect.stringMatching(/^\d{14}$/), refund_reference: expect.stringMatching(/^ARN\d+$/) }
          : r,
      );
      expect(answer.refund_orders, order).toEqual(now);
    }
  }

  it.skipIf(format.engine === "redis" && !HAS_REDIS)("answers every payment and refund as the earlier Sandgate did", { timeout: 30_000 }, answersAsBefore);

  // the day this runs is later than the day the copy was made: a month and more on, its refund has
  // settled and its subscription has charged (Date alone is faked: the server's clock reads it)
  it.runIf(format.name === "unversioned" && format.engine === "data")("and 40 days later", { timeout: 30_000 }, async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 40 * 86_400_000 });
    try {
      await answersAsBefore();
    } finally {
      vi.useRealTimers();
    }
  });

  it.skipIf(format.engine === "redis" && !HAS_REDIS)(
    "goes on where it stopped: captures, refunds, the card on file, pending notifications, the subscription",
    { timeout: 30_000 },
    async () => {
      receiver = await startReceiver(GOLDEN_NOTIFY_PORT, "/shop/notifications");
      const sandbox = await start();
      const gw = new Gateway(sandbox.url, FIXTURE_MERCHANT);
      const payments = expected.answers.payments;
      const order = (no: string, more: Record<string, string> = {}) => ({
        transaction_id: payments[no]!.transaction_id,
        order_no: no,
        currency: payments[no]!.currency,
        amount: payments[no]!.amount,
        ...more,
      });

      // SELF-0007 was authorised (2000) on the manual-capture account: it captures
      expect(payments["SELF-0007"]!.payment_status).toBe("2000");
      const captured = json(await gw.call("capture", { account_id: "A10001", capture_orders: [order("SELF-0007")] }));
      expect((captured.capture_orders as Record<string, string>[])[0]).toMatchObject({ capture_status: "1" });

      // SELF-0003 (120.00) had 30.17 refunded: 100.00 is more than is left, 89.83 is exactly what is
      const refund = (amount: string) =>
        gw.call("refund", { account_id: "A10002", refund_orders: [order("SELF-0003", { refund_amount: amount, refund_reason: "after the upgrade" })] });
      expect((json(await refund("100.00")).refund_orders as Record<string, string>[])[0]).toMatchObject({ refund_status: "0" });
      expect((json(await refund("89.83")).refund_orders as Record<string, string>[])[0]).toMatchObject({ refund_status: "1" });

      // the card kept on file by GOLD-0001 pays
      const byToken = await gw.call("authorise", {
        account_id: "A10002",
        order_no: "GOLD-0003",
        currency: "USD",
        amount: "9.00",
        token_id: expected.token_id,
        first_name: "Gil",
        last_name: "Dent",
        shopper_email: "gil@shop.example",
      });
      expect([xmlText(byToken, "order_status"), xmlText(byToken, "result_info").split(":")[0]]).toEqual(["1", "0000"]);

      // a month on: the notifications that waited are delivered, and GOLD-0002's subscription charges
      expect((await sandbox.admin.advanceClock("32d")).offset_ms).toBeGreaterThan(0);
      await sandbox.deps.notifier.drain();
      const events = receiver.received.map((r) => `${String(r.event)}:${String((r.data as Record<string, unknown> | undefined)?.order_no ?? "")}`);
      expect(events).toEqual(
        expect.arrayContaining(["payment.authorised:SELF-0001", "payment.captured:SELF-0001", "refund.accepted:SELF-0003", "payment.paid:GOLD-0002"]),
      );
      expect(receiver.received.some((r) => r.event === "subscription.deducted")).toBe(true);
    },
  );
});

describe("--data carries its format", () => {
  let work: string;
  afterEach(() => rmSync(work, { recursive: true, force: true }));
  const dataFile = () => join(work, "state.json");

  it("an earlier file is rewritten in today's format on start, and the journal names its format on its first line", async () => {
    work = mkdtempSync(join(tmpdir(), "sandgate-format-"));
    cpSync(goldenDir("field-journal", "data"), work, { recursive: true });
    expect(readFileSync(`${dataFile()}.journal`, "utf8").split("\n")[0]).not.toContain('"journal"');
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", data: dataFile() });
    try {
      expect((JSON.parse(readFileSync(dataFile(), "utf8")) as { version: number }).version).toBe(STATE_VERSION);
      const gw = new Gateway(sandbox.url, FIXTURE_MERCHANT);
      await gw.call("authorise", {
        account_id: "A10001",
        order_no: "FORMAT-1",
        currency: "USD",
        amount: "3.00",
        card: "4242424242424242",
        expiration_month: "12",
        expiration_year: "2030",
        security_code: "123",
        first_name: "F",
        last_name: "V",
        shopper_email: "f@shop.example",
      });
      expect(readFileSync(`${dataFile()}.journal`, "utf8").split("\n")[0]).toBe(`{"journal":${STATE_VERSION}}`);
    } finally {
      await sandbox.close();
    }
  });

  it("a file or journal written by a newer Sandgate is refused, naming its format, and left as it is", async () => {
    work = mkdtempSync(join(tmpdir(), "sandgate-format-"));
    cpSync(goldenDir("unversioned", "data"), work, { recursive: true });
    const snapshot = JSON.parse(readFileSync(dataFile(), "utf8")) as { version: number };
    writeFileSync(dataFile(), JSON.stringify({ ...snapshot, version: STATE_VERSION + 1 }));
    const newer = readFileSync(dataFile(), "utf8");
    await expect(startSandbox({ port: 0, data: dataFile() })).rejects.toThrow(
      `state.json: written by a newer Sandgate (state format ${STATE_VERSION + 1}; this one reads formats 1 to ${STATE_VERSION}); start the Sandgate that wrote it`,
    );
    expect(readFileSync(dataFile(), "utf8")).toBe(newer);

    writeFileSync(dataFile(), JSON.stringify(snapshot));
    const journal = `{"journal":${STATE_VERSION + 1}}\n${readFileSync(`${dataFile()}.journal`, "utf8")}`;
    writeFileSync(`${dataFile()}.journal`, journal);
    await expect(startSandbox({ port: 0, data: dataFile() })).rejects.toThrow(
      `state.json.journal: written by a newer Sandgate (journal format ${STATE_VERSION + 1}`,
    );
    expect(readFileSync(`${dataFile()}.journal`, "utf8")).toBe(journal);
  });
});

describe.skipIf(!HAS_REDIS)("a rolling upgrade on Redis: replicas of an earlier layout and today's", () => {
  const layoutOne = EARLIER_FORMATS.findLast((f) => f.layout === 1)!;
  let tree: string;
  let redis: TestRedis;
  const stopped: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const stop of stopped.splice(0)) await stop();
    await redis?.close();
    if (tree) rmSync(tree, { recursive: true, force: true });
  });
  /** A replica of the earlier Sandgate, its own process, on this Redis. */
  const earlierReplica = () => {
    const proc = spawnSandgate(["--port", "0", "--host", "127.0.0.1", "--redis-url", redis.url], { cwd: tree });
    stopped.push(async () => {
      if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
      await proc.exited;
    });
    return proc;
  };
  const payment = (order_no: string) => ({
    account_id: "A10001",
    order_no,
    currency: "USD",
    amount: "4.00",
    card: "4242424242424242",
    expiration_month: "12",
    expiration_year: "2030",
    security_code: "123",
    first_name: "R",
    last_name: "U",
    shopper_email: "r@shop.example",
  });

  it(
    "today's refuses to start (and to migrate) while an earlier replica runs, `sandgate migrate` moves the sandbox once it has stopped, and a later earlier replica fails instead of starting empty",
    { timeout: 60_000 },
    async () => {
      tree = earlierTree(layoutOne.commit);
      redis = await startRedis();
      const earlier = earlierReplica();
      const gw = new Gateway(await earlier.url, FIXTURE_MERCHANT);
      const paid = await gw.call("authorise", payment("ROLL-0001"));
      expect(xmlText(paid, "order_status")).toBe("1");

      await expect(startSandbox({ port: 0, host: "127.0.0.1", redisUrl: redis.url })).rejects.toThrow(
        /holds this sandbox in layout 1, and a replica of the earlier Sandgate that wrote it is still running: stop every earlier replica, then start this one again/,
      );
      const refused = await runSandgate(["migrate", "--redis-url", redis.url]);
      expect([refused.code, refused.stderr]).toEqual([
        1,
        "sandgate migrate: a replica of the earlier Sandgate still uses this sandbox (layout 1): stop every replica first\n",
      ]);
      // both refused without changing anything: the earlier replica still answers from its sandbox
      expect(xmlText(await gw.call("authorise", payment("ROLL-0002")), "order_status")).toBe("1");

      earlier.child.kill("SIGTERM");
      await earlier.exited;
      const dry = await runSandgate(["migrate", "--redis-url", redis.url, "--dry-run"]);
      expect(dry.stdout).toMatch(/^would move (\d+) records \(\d+ merchants, \d+ transactions, .*\) from layout 1 to layout 3\n$/);
      const moved = await runSandgate(["migrate", "--redis-url", redis.url]);
      expect([moved.code, moved.stdout]).toEqual([
        0,
        `moved the sandbox at ${redis.url} from layout 1 to layout 3: ${/would move (\d+)/.exec(dry.stdout)![1]} records\n`,
      ]);
      expect((await runSandgate(["migrate", "--redis-url", redis.url])).stdout).toMatch(/is in layout 3 already/);
      const today = await startSandbox({ port: 0, host: "127.0.0.1", redisUrl: redis.url });
      stopped.push(() => today.close());
      const answer = json(
        await new Gateway(today.url, FIXTURE_MERCHANT).call("retrievalTrans", { account_id: "A10001", order_no: "ROLL-0001,ROLL-0002" }, true),
      );
      expect((answer.orders_list as Record<string, string>[]).map((o) => [o.order_no, o.payment_status])).toEqual([
        ["ROLL-0001", "2000"],
        ["ROLL-0002", "2000"],
      ]);

      // an earlier replica started now cannot use the moved sandbox: it fails, and never answers from an empty one
      const late = earlierReplica();
      expect(await late.exited).toBe(1);
      expect(late.stderr()).toContain("cannot use Redis");
    },
  );

  it(
    "every replica says the layout it writes while it runs; one that finds a newer layout answers 503 with the reason, and health says it",
    { timeout: 30_000 },
    async () => {
      redis = await startRedis();
      const client = new Redis(redis.url);
      const rollCall = async () =>
        Object.values(await client.hgetall("sandgate:global:{g}:replicas")).map((v) => JSON.parse(v) as { layout: number; version: string; seen_at: number });
      const other = await startSandbox({ port: 0, host: "127.0.0.1", redisUrl: redis.url });
      const today = await startSandbox({ port: 0, host: "127.0.0.1", redisUrl: redis.url });
      stopped.push(() => today.close());
      expect(await rollCall()).toEqual([expect.objectContaining({ layout: REDIS_LAYOUT }), expect.objectContaining({ layout: REDIS_LAYOUT })]);
      await other.close();
      expect(await rollCall()).toHaveLength(1);
      expect((await client.hgetall("sandgate:global:{g}:settings")).layout).toBe(String(REDIS_LAYOUT));

      await client.hset("sandgate:global:{g}:settings", "layout", String(REDIS_LAYOUT + 1));
      client.disconnect();
      const reason = `Redis holds this sandbox in layout ${REDIS_LAYOUT + 1}, written by a newer Sandgate; this replica writes layout ${REDIS_LAYOUT}: upgrade it to the newer Sandgate`;
      const refused = await new Gateway(today.url, FIXTURE_MERCHANT).post(
        "/v1/authorise",
        new Gateway(today.url, FIXTURE_MERCHANT).signed("authorise", payment("NEWER-1")),
      );
      expect(refused.status).toBe(503);
      expect(xmlText(refused.text, "result_info")).toBe(`I0050:Sandbox store unavailable: ${reason}`);
      const health = await fetch(`${today.url}/__sandbox/health`);
      expect(health.status).toBe(503);
      expect(await health.json()).toEqual({ error: "store_unavailable", message: `I0050:Sandbox store unavailable: ${reason}` });
    },
  );
});

// Golden copies of the state formats earlier Sandgates wrote, made by those Sandgates themselves:
// each commit of EARLIER_FORMATS (test/earlier-formats.ts) is taken out of git and run from its own
// source (earlierTree), driven with the self-check traffic (every operation, payer page and
// notification) plus a card on file and a subscription left active, every notification sent to a
// receiver that is not there (so they are all pending), and stopped. What it wrote is kept under
// test/earlier-formats/<name>/: the --data folder as the process left it when killed (snapshot and
// journal), and for Redis every key under the prefix (redis.json). expected.json holds what the
// earlier Sandgate answered about its payments and refunds; test/earlier-formats.test.ts starts
// today's code on each copy and asks again.
//   npx tsx scripts/earlier-formats.ts [name ...]    (needs git history, redis-server)
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { freePort, startRedis } from "./redis-server.js";
import { spawnSandgate } from "./sandgate-process.js";
import { CARDS, EXPIRY, FIXTURE_MERCHANT, Gateway, driveEveryOperation, xmlText } from "./self-check/traffic.js";
import { EARLIER_FORMATS, earlierTree, GOLDEN_NOTIFY_PORT, GOLDEN_SEED, goldenDir, type EarlierFormat, type GoldenExpected } from "../test/earlier-formats.js";

const git = (...args: string[]) => execFileSync("git", args, { cwd: fileURLToPath(new URL("..", import.meta.url)), encoding: "utf8" }).trim();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The payments and refunds as the gateway's own query operations answer them (JSON). */
async function answers(gw: Gateway, orders: Record<string, string[]>): Promise<GoldenExpected["answers"]> {
  const out: GoldenExpected["answers"] = { payments: {}, refunds: {} };
  for (const [account, nos] of Object.entries(orders)) {
    const text = await gw.call("retrievalTrans", { account_id: account, order_no: nos.join(",") }, true);
    for (const o of (JSON.parse(text) as { orders_list: Record<string, string>[] }).orders_list) out.payments[o.order_no!] = o;
  }
  for (const no of ["SELF-0003", "SELF-0012", "SELF-0014"]) {
    const text = await gw.call("retrievalRefund", { account_id: "A10002", order_no: no }, true);
    out.refunds[no] = (JSON.parse(text) as { refund_orders?: Record<string, string>[] }).refund_orders ?? [];
  }
  return out;
}

/** Runs one earlier Sandgate on `engine` and keeps what it wrote. */
async function golden(format: EarlierFormat, engine: "data" | "redis", tree: string, out: string): Promise<GoldenExpected> {
  const work = mkdtempSync(join(tmpdir(), "sandgate-golden-"));
  const redis = engine === "redis" ? await startRedis() : undefined;
  const port = await freePort();
  const args = ["--port", String(port), "--host", "127.0.0.1", "--seed", GOLDEN_SEED, "--log-level", "silent"];
  args.push(...(redis ? ["--redis-url", redis.url] : ["--data", join(work, "state.json")]));
  const proc = spawnSandgate(args, { cwd: tree, env: { LOG_LEVEL: "silent" } });
  try {
    const base = await proc.url;
    const notifyUrl = `http://127.0.0.1:${GOLDEN_NOTIFY_PORT}/shop/notifications`;
    const steps: string[] = [];
    try {
      await driveEveryOperation(base, { notifyUrl });
      steps.push("self-check traffic: every step");
    } catch (err) {
      steps.push(`self-check traffic stopped: ${(err as Error).message.split("\n")[0]}`);
    }
    const gw = new Gateway(base, FIXTURE_MERCHANT);
    const gold = (n: string, more: Record<string, unknown>) => ({
      account_id: "A10002",
      order_no: `GOLD-${n}`,
      currency: "USD",
      amount: "12.00",
      card: CARDS.approve,
      ...EXPIRY,
      first_name: "Gil",
      last_name: "Dent",
      shopper_email: "gil@shop.example",
      notify_url: notifyUrl,
      return_url: "https://shop.example/return",
      ...more,
    });
    const tokenised = await gw.call("authorise", gold("0001", { token_flag: "YES" }));
    const subscribed = await gw.call(
      "authorise",
      gold("0002", { subscription: { contract: "GOLD-CONTRACT", contract_name: "Golden box", interval: "month", interval_count: "1", billing_cycle: 6 } }),
    );
    steps.push("a card on file (GOLD-0001) and a monthly subscription left active (GOLD-0002)");
    // what the clock brings 5 s after the traffic (a refund failing) happens before the copy
    await sleep(6_500);
    const expected: GoldenExpected = {
      commit: format.commit,
      engine,
      steps,
      token_id: xmlText(tokenised, "token_id"),
      recurring_id: xmlText(subscribed, "recurring_id"),
      answers: await answers(gw, {
        A10001: ["0001", "0002", "0004", "0005", "0006", "0007", "0008", "0009", "0011", "0015"].map((n) => `SELF-${n}`),
        A10002: [...["0003", "0010", "0012", "0013", "0014"].map((n) => `SELF-${n}`), "GOLD-0001", "GOLD-0002"],
      }),
    };
    if (redis) {
      // a replica stopped as in an upgrade: its turn handed over, what it wrote in Redis
      proc.child.kill("SIGTERM");
      await proc.exited;
      writeFileSync(join(out, "redis.json"), `${JSON.stringify(await dumpRedis(redis.url), null, 1)}\n`);
    } else {
      // killed, not stopped: the folder as a crash leaves it (snapshot and journal)
      proc.child.kill("SIGKILL");
      await proc.exited;
      cpSync(work, out, { recursive: true });
    }
    return expected;
  } finally {
    if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
    await redis?.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/** Every key in Redis, by type (the turn locks, which only a running replica holds, left out). */
async function dumpRedis(url: string): Promise<Record<string, { type: string; value: unknown }>> {
  const client = new Redis(url);
  try {
    const keys = (await client.keys("*")).filter((k) => !k.endsWith("lock")).sort();
    const out: Record<string, { type: string; value: unknown }> = {};
    for (const key of keys) {
      const type = await client.type(key);
      if (type === "string") out[key] = { type, value: await client.get(key) };
      else if (type === "hash") out[key] = { type, value: await client.hgetall(key) };
      else if (type === "set") out[key] = { type, value: (await client.smembers(key)).sort() };
      else if (type === "zset") out[key] = { type, value: await client.zrange(key, "0", "-1", "WITHSCORES") };
      else if (type === "list") out[key] = { type, value: await client.lrange(key, 0, -1) };
      else if (type === "stream") out[key] = { type, value: await client.xrange(key, "-", "+") };
      else throw new Error(`${key}: a ${type}, which this dump does not know`);
    }
    return out;
  } finally {
    client.disconnect();
  }
}

const wanted = process.argv.slice(2);
for (const format of EARLIER_FORMATS.filter((f) => wanted.length === 0 || wanted.includes(f.name))) {
  const tree = earlierTree(format.commit);
  try {
    for (const engine of format.engines) {
      const out = goldenDir(format.name, engine);
      rmSync(out, { recursive: true, force: true });
      mkdirSync(out, { recursive: true });
      const expected = await golden(format, engine, tree, out);
      writeFileSync(join(out, "expected.json"), `${JSON.stringify({ ...expected, subject: git("log", "-1", "--format=%s", format.commit) }, null, 1)}\n`);
      process.stdout.write(`${format.name} (${engine}): ${expected.steps.join("; ")}\n`);
    }
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
}

// `npm run bench:accounts` (issue 44, "Bounded tenants"): what a merchant's accounts cost on Redis.
// One Redis and one Sandgate, each in its own process. A merchant's accounts are provisioned in
// steps up to --max-accounts (100); at 10 and at 100 accounts, 1,000 payments one after another on
// one of them, timed, with the server's CPU per payment; Redis's used_memory after each step. Then
// 2,000 attempts at new accounts past the cap, each refused (I0015), and Redis's memory after them.
// Printed: per step, Redis used_memory and its growth per account since the step before; the
// payments' mean, p99 and server CPU µs at 10 and 100 accounts, and their ratio (100 ÷ 10).
import { performance } from "node:perf_hooks";
import { Redis } from "ioredis";
import { startRedis } from "../redis-server.js";
import { startSandgate, type Service } from "./processes.js";

const SIG = "a".repeat(64);
const MERCHANT = "BENCH-ACC";
/** the merchant whose memory is read: its accounts only, no payments */
const HOLDER = "BENCH-MEM";

async function post(server: Service, path: string, body: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

const account = (i: number) => `ACC-${String(i).padStart(60, "0")}`; // 64 characters: the longest an id may be

async function payments(server: Service, n: number): Promise<{ mean: number; p99: number; cpu: number }> {
  const times: number[] = [];
  const cpu0 = server.cpuMicros();
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const status = await post(server, "/v1/authorise", {
      merchant_id: MERCHANT,
      account_id: account(0),
      order_no: `ORD-${i}-${Date.now()}`,
      currency: "USD",
      amount: "10.00",
      first_name: "Jane",
      last_name: "Doe",
      card: "4242424242424242",
      expiration_year: "2030",
      expiration_month: "12",
      security_code: "123",
      shopper_email: "jane@example.com",
      encryption_data: SIG,
    });
    if (status !== 200) throw new Error(`payment answered ${status}`);
    times.push(performance.now() - started);
  }
  const cpu = (server.cpuMicros() - cpu0) / n;
  times.sort((a, b) => a - b);
  return { mean: times.reduce((a, b) => a + b, 0) / n, p99: times[Math.floor(n * 0.99)]!, cpu };
}

const redis = await startRedis();
const server = await startSandgate(["--redis-url", redis.url, "--redis-prefix", "bench-acc:", "--log-level", "warn"]);
const client = new Redis(redis.url);
/** bytes Redis holds for the merchant's keys: all of them, and its changes stream */
async function merchantMemory(merchant: string): Promise<{ all: number; changes: number }> {
  const keys = await client.keys(`bench-acc:m:{${merchant}}:*`);
  let all = 0;
  let changes = 0;
  for (const key of keys) {
    const bytes = Number(await client.memory("USAGE", key, "SAMPLES", "0"));
    all += bytes;
    if (key.endsWith(":changes")) changes += bytes;
  }
  return { all, changes };
}
try {
  const rows: string[] = [];
  let provisioned = 0;
  const at: Record<number, Awaited<ReturnType<typeof payments>>> = {};
  const kb = (b: number) => `${(b / 1e3).toFixed(1)} KB`;
  for (const step of [10, 50, 100]) {
    for (; provisioned < step; provisioned++) {
      for (const merchant of [MERCHANT, HOLDER]) {
        const status = await post(server, "/v1/retrievalTrans", { merchant_id: merchant, account_id: account(provisioned), encryption_data: SIG });
        if (status !== 200) throw new Error(`account ${provisioned} answered ${status}`);
      }
    }
    const { all, changes } = await merchantMemory(HOLDER);
    rows.push(`| ${step} | ${kb(all)} | ${kb(changes)} | ${kb(all / step)} |`);
    if (step === 10 || step === 100) at[step] = await payments(server, 1_000);
  }
  const before = await merchantMemory(HOLDER);
  let refused = 0;
  for (let i = 0; i < 2_000; i++)
    if ((await post(server, "/v1/retrievalTrans", { merchant_id: HOLDER, account_id: `NEW-${i}`, encryption_data: SIG })) === 409) refused++;
  const after = await merchantMemory(HOLDER);
  console.log("| accounts | the merchant's keys | of which its changes stream | per account |\n|---|---|---|---|\n" + rows.join("\n"));
  console.log(`2,000 attempts past the cap: ${refused} refused; the merchant's keys ${kb(before.all)} before, ${kb(after.all)} after`);
  const [a, b] = [at[10]!, at[100]!];
  console.log(
    `payments at 10 accounts: mean ${a.mean.toFixed(2)} ms, p99 ${a.p99.toFixed(2)} ms, ${a.cpu.toFixed(0)} µs CPU; at 100: mean ${b.mean.toFixed(2)} ms, p99 ${b.p99.toFixed(2)} ms, ${b.cpu.toFixed(0)} µs CPU`,
  );
  console.log(`ratio 100 ÷ 10 accounts: mean ${(b.mean / a.mean).toFixed(2)}, CPU ${(b.cpu / a.cpu).toFixed(2)}`);
} finally {
  client.disconnect();
  await server.stop();
  await redis.close();
}

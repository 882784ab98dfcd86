// `npm run bench:replicas [-- --reps 3 --quick]`, and a part of `npm run bench`.
// The shared store partitioned by merchant: a request takes only its merchant's turn in Redis, so
// replicas (--workers 2 --redis-url) serve different merchants at once. Measured, every server in
// its own process (Redis, a fresh --redis-prefix per run, and the fault proxy too), the load from
// autocannon in this one, 16 merchants (BM01…BM16) taken in turn, 10 connections:
//   1. direct payments: one process in memory, one process with --data, --workers 2 on Redis, one
//      process on Redis;
//   2. captures of 50 fresh payments each: one process in memory, --workers 2 on Redis;
//   3. Redis round trips on a request's critical path, counted black-box: Redis behind a proxy
//      (fault-proxy.ts) that holds every chunk D ms each way, one connection sending requests
//      one at a time: (median latency at D = 5 ms − at D = 0) / 2D; and, since a timer holding a
//      chunk 5 ms fires a little later, the same difference over what D adds to a PING's round
//      trip through the proxy (measured, sequential PINGs from this process);
//   4. --workers 2 through that proxy at D = 1 ms against D = 0, under load: what the round
//      trips cost when Redis is a network hop away (at 10 connections, and at 40);
//   5. Redis commands per direct payment (INFO commandstats around run 1b).
// Each rep runs everything once, interleaved; figures are medians over the reps and every ratio the
// median of each rep's own ratio (its two runs were a minute apart at most). The machine has 2 cores
// which the load generator shares with the servers and Redis: ratios against a baseline of the same
// run mean more than absolute req/s. CPU µs/req is the server's process tree (primary and workers);
// redis-server's own CPU (/proc/<pid>/stat) is reported apart.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { startRedis } from "../redis-server.js";
import { spawnFaultProxy } from "../fault-proxy.js";
import { startSandgate, type Service } from "./processes.js";
import { median, run, type Run } from "./run.js";
import { SIG, type Step, type Workload } from "./workloads.js";

export const MERCHANTS = Array.from({ length: 16 }, (_, i) => `BM${String(i + 1).padStart(2, "0")}`);
const CONNECTIONS = 10;
/** per run, before --quick's tenth: ≥ 2 s of direct payments; captures of 50 as many as W2 */
const PAYMENTS = 8000;
const CAPTURES = 400;
/** requests sent one at a time per delay (3.) */
const SEQUENTIAL = { warm: 50, payments: 300, captures: 40 };
const ROUND_TRIP_DELAY_MS = 5;
const LOAD_DELAY_MS = 1;
/**
 * Redis a hop away costs each request its round trips in latency; with 10 connections, each waiting
 * for its answer before the next request, that latency is throughput lost (Little's law: 10
 * requests in flight ÷ latency). The same runs at 40 connections show how much of it is that.
 */
const WIDE_CONNECTIONS = 40;

export interface Measured extends Run {
  /** redis-server's CPU per request, µs (NaN without Redis) */
  redis_cpu: number;
}

interface Rep {
  payments: { memory: Measured; data: Measured; workers2: Measured; single: Measured };
  captures: { memory: Measured; workers2: Measured };
  /** median latency (ms) of sequential requests at each delay, and of a PING through the proxy */
  sequential: { payment: Record<number, number>; capture: Record<number, number>; ping: Record<number, number>; valid: number };
  load: { d0: Measured; d1: Measured; ping: Record<number, number>; wide: { d0: Measured; d1: Measured } };
  /** Redis commands per direct payment in run 1b, by command */
  commands: Record<string, number>;
}

export interface ReplicasBench {
  reps: number;
  quick: boolean;
  requests: { payments: number; captures: number };
  runs: Rep[];
  payments: Record<"memory" | "data" | "workers2" | "single", Measured> & {
    data_x_memory: number;
    workers2_x_memory: number;
    workers2_x_data: number;
    single_x_memory: number;
  };
  captures: Record<"memory" | "workers2", Measured> & { workers2_x_memory: number };
  round_trips: {
    /** share of valid answers: each rep's lowest among its sequential runs, median over reps */
    valid: number;
    /** (latency at D − at 0) / 2D */
    payment: number;
    capture: number;
    /** (latency at D − at 0) / (a PING's latency at D − at 0) */
    payment_by_ping: number;
    capture_by_ping: number;
    payment_ms: Record<number, number>;
    capture_ms: Record<number, number>;
    ping_ms: Record<number, number>;
  };
  load_delay: { d0_rps: number; d1_rps: number; d1_x_d0: number; ping_ms: Record<number, number>; wide: { d0_rps: number; d1_rps: number; d1_x_d0: number } };
  commands_per_payment: { total: number; top: [string, number][] };
}

// ---- the requests -----------------------------------------------------------------------------

let sequence = 0;
let turn = 0;
const JSON_TYPE = "application/json";
const payment = (merchant_id = MERCHANTS[turn++ % MERCHANTS.length]!) =>
  JSON.stringify({
    merchant_id,
    account_id: "A1",
    order_no: `R-${process.pid}-${++sequence}`,
    currency: "USD",
    amount: "10.00",
    card: "4242424242424242",
    expiration_month: "12",
    expiration_year: "2030",
    security_code: "123",
    encryption_data: SIG,
  });
const approved = (t: string) => t.includes("<order_status>1</order_status>");
const captured50 = (t: string) => (t.match(/"capture_status":"1"/g) ?? []).length === 50;
export const PAYMENT: Step = { path: "/v1/authorise", type: JSON_TYPE, body: () => payment(), check: approved };

/** the next of these bodies at each call (again from the first after the last) */
function inTurn(bodies: string[]): () => string {
  let i = 0;
  return () => bodies[i++ % bodies.length]!;
}
export const captureStep = (bodies: string[]): Step => ({ path: "/v1/capture", type: JSON_TYPE, body: inTurn(bodies), check: captured50 });

/**
 * Requests in flight at once per merchant while the capture bodies are made (16 merchants: 160 in
 * all). fetch opens a connection for each request it cannot place at once, and keeps about twice as
 * many open as it has in flight: at 25 each (400) it held ~800 and met Sandgate's 500 per client.
 */
const SETUP_IN_FLIGHT = 10;

/** n approved payments of one merchant, made through the API SETUP_IN_FLIGHT at a time: their capture_orders entries */
async function approvedPayments(url: string, merchant: string, n: number): Promise<object[]> {
  const orders: object[] = [];
  while (orders.length < n) {
    const bodies = Array.from({ length: Math.min(SETUP_IN_FLIGHT, n - orders.length) }, () => payment(merchant));
    const answers = await Promise.all(
      bodies.map((body) => fetch(`${url}/v1/authorise`, { method: "POST", headers: { "content-type": JSON_TYPE }, body }).then((r) => r.text())),
    );
    answers.forEach((xml, i) => {
      const transaction_id = /<transaction_id>(\d+)<\/transaction_id>/.exec(xml)?.[1];
      if (!transaction_id) throw new Error(`bench setup: no transaction_id in ${xml.slice(0, 300)}`);
      orders.push({ transaction_id, order_no: (JSON.parse(bodies[i]!) as { order_no: string }).order_no, currency: "USD", amount: "10.00" });
    });
  }
  return orders;
}

/** `count` capture requests of 50 fresh approved payments each, the 16 merchants in turn (as W2, one merchant per request) */
export async function captureBodies(url: string, count: number): Promise<string[]> {
  const rounds = Math.ceil(count / MERCHANTS.length);
  const orders = await Promise.all(MERCHANTS.map((m) => approvedPayments(url, m, rounds * 50)));
  return Array.from({ length: count }, (_, k) => {
    const m = k % MERCHANTS.length;
    const first = Math.floor(k / MERCHANTS.length) * 50;
    return JSON.stringify({ merchant_id: MERCHANTS[m], account_id: "A1", encryption_data: SIG, capture_orders: orders[m]!.slice(first, first + 50) });
  });
}

// ---- measuring ----------------------------------------------------------------------------------

/** redis-server's CPU time so far (user + system, every thread), µs: /proc/<pid>/stat, 10 ms ticks */
function redisCpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** calls of each command since Redis started (INFO commandstats; commands scripts run are counted too) */
async function commandCalls(client: Redis): Promise<Record<string, number>> {
  const calls: Record<string, number> = {};
  for (const [, name, n] of (await client.info("commandstats")).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[name!] = Number(n);
  return calls;
}

const asWorkload = (id: string): Workload => ({ id, title: id, requests: 0, prepare: () => Promise.resolve([]) });

/** one autocannon run (run.ts), and redis-server's CPU per request over it */
export async function measure(s: Service, id: string, step: Step, requests: number, redisPid?: number, connections = CONNECTIONS): Promise<Measured> {
  const before = redisPid ? redisCpuMicros(redisPid) : 0;
  const r = await run(s, asWorkload(id), [step], requests, connections, false);
  return { ...r, redis_cpu: redisPid ? (redisCpuMicros(redisPid) - before) / requests : NaN };
}

/** requests sent one at a time on one connection: the median latency (ms) and the share of valid answers */
async function sequential(url: string, step: Step, n: number): Promise<{ ms: number; valid: number }> {
  const times: number[] = [];
  let valid = 0;
  for (let i = 0; i < n; i++) {
    const body = step.body({});
    const t0 = performance.now();
    const res = await fetch(`${url}${step.path}`, { method: "POST", headers: { "content-type": step.type }, body });
    const text = await res.text();
    times.push(performance.now() - t0);
    if (res.ok && step.check(text, {})) valid++;
  }
  return { ms: median(times), valid: valid / n };
}

/** PINGs one at a time through this client: the median round trip, ms */
async function pingMs(client: Redis, n = 50): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await client.ping();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** a server started for `use` and stopped after it, whatever happens */
async function withServer<T>(start: Promise<Service>, use: (s: Service) => Promise<T>): Promise<T> {
  const s = await start;
  try {
    return await use(s);
  } finally {
    await s.stop();
  }
}

let prefixes = 0;
/** Sandgate on Redis with a prefix of its own (a store no run saw before), --workers n when n > 1 */
const onRedis = (url: string, workers = 1) =>
  startSandgate([...(workers > 1 ? ["--workers", String(workers)] : []), "--redis-url", url, "--redis-prefix", `bench-${process.pid}-${++prefixes}:`]);

// ---- the bench ------------------------------------------------------------------------------------

export async function benchReplicas(reps: number, log: (t: string) => void, quick = false): Promise<ReplicasBench> {
  const scale = quick ? 0.1 : 1;
  const payments = PAYMENTS * scale;
  const captures = CAPTURES * scale;
  const seq = quick ? { warm: 20, payments: 60, captures: 10 } : SEQUENTIAL;
  const warm = (s: Service, step: Step = PAYMENT, n = payments / 4) => run(s, asWorkload("warm-up"), [step], n, CONNECTIONS, false);
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-replicas-"));
  const redis = await startRedis();
  const client = new Redis(redis.url);
  const proxy = await spawnFaultProxy(redis.port).catch(async (error: unknown) => {
    client.disconnect();
    await redis.close();
    throw error;
  });
  const proxied = new Redis(proxy.url);
  const runs: Rep[] = [];
  try {
    const redisPid = Number(/process_id:(\d+)/.exec(await client.info("server"))?.[1]);
    for (let rep = 1; rep <= reps; rep++) {
      const say = (what: string) => log(`replicas rep ${rep}/${reps}: ${what}`);
      say(`${payments} direct payments: one process in memory, one with --data, --workers 2 on Redis, one process on Redis`);
      const memory = await withServer(startSandgate(), async (s) => (await warm(s), measure(s, "R-pay", PAYMENT, payments)));
      const data = await withServer(
        startSandgate(["--data", join(dir, `state-${rep}.json`)]),
        async (s) => (await warm(s), measure(s, "R-pay", PAYMENT, payments)),
      );
      let commands: Record<string, number> = {};
      const workers2 = await withServer(onRedis(redis.url, 2), async (s) => {
        await warm(s);
        const before = await commandCalls(client);
        const m = await measure(s, "R-pay", PAYMENT, payments, redisPid);
        const after = await commandCalls(client);
        commands = Object.fromEntries(
          Object.entries(after)
            .map(([name, n]) => [name, (n - (before[name] ?? 0)) / payments])
            .filter(([name, n]) => name !== "info" && Number(n) > 0),
        );
        return m;
      });
      const single = await withServer(onRedis(redis.url), async (s) => (await warm(s), measure(s, "R-pay", PAYMENT, payments, redisPid)));

      say(`${captures} captures of 50: one process in memory, --workers 2 on Redis`);
      const capturing = (redisPid?: number) => async (s: Service) => {
        const bodies = await captureBodies(s.url, MERCHANTS.length + captures);
        await warm(s, captureStep(bodies.slice(0, MERCHANTS.length)), MERCHANTS.length);
        return measure(s, "R-capture", captureStep(bodies.slice(MERCHANTS.length)), captures, redisPid);
      };
      const captureMemory = await withServer(startSandgate(), capturing());
      const captureWorkers2 = await withServer(onRedis(redis.url, 2), capturing(redisPid));

      say(`round trips: one process on Redis through the proxy, one connection, D = 0 and ${ROUND_TRIP_DELAY_MS} ms`);
      const seqRun = await withServer(onRedis(proxy.url), async (s) => {
        await proxy.delay(0);
        await sequential(s.url, PAYMENT, seq.warm);
        const bodies = await captureBodies(s.url, MERCHANTS.length + 2 * seq.captures);
        await sequential(s.url, captureStep(bodies.slice(0, MERCHANTS.length)), MERCHANTS.length);
        const out: Rep["sequential"] = { payment: {}, capture: {}, ping: {}, valid: 1 };
        for (const [i, d] of [0, ROUND_TRIP_DELAY_MS].entries()) {
          await proxy.delay(d);
          const p = await sequential(s.url, PAYMENT, seq.payments);
          const first = MERCHANTS.length + i * seq.captures;
          const c = await sequential(s.url, captureStep(bodies.slice(first, first + seq.captures)), seq.captures);
          out.payment[d] = p.ms;
          out.capture[d] = c.ms;
          out.ping[d] = await pingMs(proxied);
          out.valid = Math.min(out.valid, p.valid, c.valid);
        }
        await proxy.delay(0);
        return out;
      });

      say(`--workers 2 on Redis through the proxy, ${payments} direct payments at D = 0 and ${LOAD_DELAY_MS} ms`);
      const load = await withServer(onRedis(proxy.url, 2), async (s) => {
        await proxy.delay(0);
        await warm(s);
        const at: Record<number, Measured> = {};
        const wide: Record<number, Measured> = {};
        const ping: Record<number, number> = {};
        // the order swapped every rep, so a drift during the rep moves both sides
        for (const d of rep % 2 ? [0, LOAD_DELAY_MS] : [LOAD_DELAY_MS, 0]) {
          await proxy.delay(d);
          at[d] = await measure(s, "R-pay-proxy", PAYMENT, payments, redisPid);
          wide[d] = await measure(s, "R-pay-proxy-wide", PAYMENT, payments, redisPid, WIDE_CONNECTIONS);
          ping[d] = await pingMs(proxied);
        }
        await proxy.delay(0);
        return { d0: at[0]!, d1: at[LOAD_DELAY_MS]!, ping, wide: { d0: wide[0]!, d1: wide[LOAD_DELAY_MS]! } };
      });
      runs.push({
        payments: { memory, data, workers2, single },
        captures: { memory: captureMemory, workers2: captureWorkers2 },
        sequential: seqRun,
        load,
        commands,
      });
    }
  } finally {
    client.disconnect();
    proxied.disconnect();
    await proxy.close();
    await redis.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return summary(runs, reps, quick, { payments, captures });
}

function summary(runs: Rep[], reps: number, quick: boolean, requests: ReplicasBench["requests"]): ReplicasBench {
  const med = (f: (r: Rep) => number) => median(runs.map(f).filter(Number.isFinite));
  const medRun = (pick: (r: Rep) => Measured): Measured => ({
    rps: med((r) => pick(r).rps),
    cpu: med((r) => pick(r).cpu),
    redis_cpu: med((r) => pick(r).redis_cpu),
    p99: med((r) => pick(r).p99),
    valid: med((r) => pick(r).valid),
  });
  const atEach = (pick: (r: Rep) => Record<number, number>, delays: number[]) => Object.fromEntries(delays.map((d) => [d, med((r) => pick(r)[d]!)]));
  const D = ROUND_TRIP_DELAY_MS;
  const names = [...new Set(runs.flatMap((r) => Object.keys(r.commands)))];
  const perCommand = names.map((name) => [name, med((r) => r.commands[name] ?? 0)] as [string, number]).sort((a, b) => b[1] - a[1]);
  return {
    reps,
    quick,
    requests,
    runs,
    payments: {
      memory: medRun((r) => r.payments.memory),
      workers2: medRun((r) => r.payments.workers2),
      single: medRun((r) => r.payments.single),
      data: medRun((r) => r.payments.data),
      data_x_memory: med((r) => r.payments.data.rps / r.payments.memory.rps),
      workers2_x_memory: med((r) => r.payments.workers2.rps / r.payments.memory.rps),
      workers2_x_data: med((r) => r.payments.workers2.rps / r.payments.data.rps),
      single_x_memory: med((r) => r.payments.single.rps / r.payments.memory.rps),
    },
    captures: {
      memory: medRun((r) => r.captures.memory),
      workers2: medRun((r) => r.captures.workers2),
      workers2_x_memory: med((r) => r.captures.workers2.rps / r.captures.memory.rps),
    },
    round_trips: {
      payment: med((r) => (r.sequential.payment[D]! - r.sequential.payment[0]!) / (2 * D)),
      capture: med((r) => (r.sequential.capture[D]! - r.sequential.capture[0]!) / (2 * D)),
      valid: med((r) => r.sequential.valid),
      payment_by_ping: med((r) => (r.sequential.payment[D]! - r.sequential.payment[0]!) / (r.sequential.ping[D]! - r.sequential.ping[0]!)),
      capture_by_ping: med((r) => (r.sequential.capture[D]! - r.sequential.capture[0]!) / (r.sequential.ping[D]! - r.sequential.ping[0]!)),
      payment_ms: atEach((r) => r.sequential.payment, [0, D]),
      capture_ms: atEach((r) => r.sequential.capture, [0, D]),
      ping_ms: atEach((r) => r.sequential.ping, [0, D]),
    },
    load_delay: {
      d0_rps: med((r) => r.load.d0.rps),
      d1_rps: med((r) => r.load.d1.rps),
      d1_x_d0: med((r) => r.load.d1.rps / r.load.d0.rps),
      ping_ms: atEach((r) => r.load.ping, [0, LOAD_DELAY_MS]),
      wide: { d0_rps: med((r) => r.load.wide.d0.rps), d1_rps: med((r) => r.load.wide.d1.rps), d1_x_d0: med((r) => r.load.wide.d1.rps / r.load.wide.d0.rps) },
    },
    commands_per_payment: { total: med((r) => Object.values(r.commands).reduce((a, b) => a + b, 0)), top: perCommand.slice(0, 8) },
  };
}

// ---- the report -----------------------------------------------------------------------------------

const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "—");
const line = (cells: string[]) => `| ${cells.join(" | ")} |`;

export function replicasTable(r: ReplicasBench): string {
  const D = ROUND_TRIP_DELAY_MS;
  const rt = r.round_trips;
  const ms = (n: number | undefined) => `${fixed(n ?? NaN, 2)} ms`;
  const row = (name: string, m: Measured, ratio: number) =>
    line([name, fixed(m.rps), fixed(ratio, 2), fixed(m.cpu), fixed(m.redis_cpu), fixed(m.p99), `${fixed(m.valid * 100, 1)} %`]);
  const head = [
    "16 merchants, 10 connections",
    "req/s",
    "× one process in memory",
    "CPU µs/req (Sandgate processes)",
    "redis-server CPU µs/req",
    "p99 ms",
    "valid",
  ];
  return [
    `Replicas, the store partitioned by merchant (${r.reps} reps, medians; ratios: the median of each rep's own ratio${r.quick ? "; --quick: a look, not figures to quote" : ""})`,
    line(head),
    line(head.map(() => "---")),
    row(`direct payment, one process in memory`, r.payments.memory, 1),
    row(`direct payment, one process with --data`, r.payments.data, r.payments.data_x_memory),
    row(
      `direct payment, --workers 2 + Redis (× one process --data: ${fixed(r.payments.workers2_x_data, 2)})`,
      r.payments.workers2,
      r.payments.workers2_x_memory,
    ),
    row(`direct payment, one process + Redis`, r.payments.single, r.payments.single_x_memory),
    row(`capture 50 payments, one process in memory`, r.captures.memory, 1),
    row(`capture 50 payments, --workers 2 + Redis`, r.captures.workers2, r.captures.workers2_x_memory),
    "",
    `Redis round trips on the critical path (one process, one connection, requests one at a time; Redis behind a proxy holding each chunk D ms each way; (median latency at D = ${D} ms − at D = 0) / ${2 * D} ms):`,
    `  direct payment: ${fixed(rt.payment, 2)} (target ≤ 2; ${ms(rt.payment_ms[0])} → ${ms(rt.payment_ms[D])}); over a PING's added round trip: ${fixed(rt.payment_by_ping, 2)}`,
    `  capture of 50 payments: ${fixed(rt.capture, 2)} (target ≤ 3; ${ms(rt.capture_ms[0])} → ${ms(rt.capture_ms[D])}); over a PING's added round trip: ${fixed(rt.capture_by_ping, 2)}`,
    `  a PING through the proxy: ${ms(rt.ping_ms[0])} → ${ms(rt.ping_ms[D])} (2D = ${2 * D} ms); ${fixed(rt.valid * 100, 1)} % of the answers valid`,
    `Redis ${LOAD_DELAY_MS} ms away (--workers 2 through the proxy, direct payments, 10 connections): ${fixed(r.load_delay.d1_rps)} req/s against ${fixed(r.load_delay.d0_rps)} req/s at D = 0: × ${fixed(r.load_delay.d1_x_d0, 2)} (target ≥ 0.8); ` +
      `a PING through the proxy (sequential, after each run): ${ms(r.load_delay.ping_ms[0])} → ${ms(r.load_delay.ping_ms[LOAD_DELAY_MS])}; ` +
      `at ${WIDE_CONNECTIONS} connections: ${fixed(r.load_delay.wide.d1_rps)} req/s against ${fixed(r.load_delay.wide.d0_rps)}: × ${fixed(r.load_delay.wide.d1_x_d0, 2)}`,
    `Redis commands per direct payment (--workers 2, INFO commandstats, commands run inside scripts counted too): ${fixed(r.commands_per_payment.total, 2)}; ` +
      r.commands_per_payment.top.map(([name, n]) => `${name} ${fixed(n, 2)}`).join(", "),
  ].join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { reps: { type: "string", default: "3" }, quick: { type: "boolean", default: false } } });
  const reps = Number(values.reps);
  if (!Number.isInteger(reps) || reps < 1) throw new Error(`--reps must be a whole number ≥ 1, not ${values.reps}`);
  const figures = await benchReplicas(reps, (t) => process.stderr.write(`${t}\n`), values.quick);
  process.stdout.write(`${replicasTable(figures)}\n`);
}

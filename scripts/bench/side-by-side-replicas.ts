// `tsx scripts/bench/side-by-side-replicas.ts --base <checkout> [--reps 4] [--captures]`
// Two builds on one Redis, judged against each other, as side-by-side.ts does for one process: the
// bundle of another checkout (--base, built with `npm run build` there) and this one's. Every rep
// runs, for each build in turn (the order swapped every rep), one process on Redis and --workers 2
// on Redis, each on a fresh --redis-prefix, 16 merchants' direct payments (and with --captures,
// captures of 50), 10 connections. Per run: req/s, Sandgate's CPU per request (every process and
// thread), redis-server's; per pair, the median of the reps' ratios (this build ÷ the base).
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { NODE_FLAGS } from "../node-flags.js";
import { startRedis } from "../redis-server.js";
import { ROOT, started, type Service } from "./processes.js";
import { captureBodies, captureStep, measure, MERCHANTS, PAYMENT, type Measured } from "./replicas.js";
import { median, run } from "./run.js";

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    reps: { type: "string", default: "4" },
    captures: { type: "boolean", default: false },
    payments: { type: "string", default: "8000" },
  },
});
if (!values.base) throw new Error("--base <checkout with a built dist/sandgate.js> is required");
const reps = Number(values.reps);
const payments = Number(values.payments);
const log = (text: string) => process.stderr.write(`${text}\n`);
const builds = [
  { name: "base", bundle: resolve(values.base, "dist", "sandgate.js") },
  { name: "this", bundle: resolve(ROOT, "dist", "sandgate.js") },
];
const modes = [
  { name: "one process + Redis", workers: 1 },
  { name: "--workers 2 + Redis", workers: 2 },
];
const asWorkload = (id: string) => ({ id, title: id, requests: 0, prepare: () => Promise.resolve([]) });

const redis = await startRedis();
const client = new Redis(redis.url);
const redisPid = Number(/process_id:(\d+)/.exec(await client.info("server"))?.[1]);
let prefixes = 0;
const results = new Map<string, Measured[]>();
const keep = (k: string, m: Measured) => results.set(k, [...(results.get(k) ?? []), m]);
try {
  for (let rep = 1; rep <= reps; rep++) {
    for (const b of rep % 2 ? builds : [...builds].reverse()) {
      for (const mode of modes) {
        const s: Service = await started([
          ...NODE_FLAGS,
          b.bundle,
          "--port",
          "0",
          "--host",
          "127.0.0.1",
          "--seed",
          "bench",
          ...(mode.workers > 1 ? ["--workers", String(mode.workers)] : []),
          "--redis-url",
          redis.url,
          "--redis-prefix",
          `sbs-${process.pid}-${++prefixes}:`,
        ]);
        try {
          await run(s, asWorkload("warm-up"), [PAYMENT], payments / 4, 10, false);
          const pay = await measure(s, "R-pay", PAYMENT, payments, redisPid);
          keep(`${b.name}|${mode.name}|payment`, pay);
          let line = `rep ${rep} ${b.name} ${mode.name}: payment ${pay.rps.toFixed(0)} req/s, ${pay.cpu.toFixed(0)} µs + redis ${pay.redis_cpu.toFixed(0)} µs`;
          if (values.captures) {
            const bodies = await captureBodies(s.url, MERCHANTS.length + 200);
            await run(s, asWorkload("warm-up"), [captureStep(bodies.slice(0, MERCHANTS.length))], MERCHANTS.length, 10, false);
            const cap = await measure(s, "R-capture", captureStep(bodies.slice(MERCHANTS.length)), 200, redisPid);
            keep(`${b.name}|${mode.name}|capture 50`, cap);
            line += `; capture 50 ${cap.rps.toFixed(0)} req/s, ${cap.cpu.toFixed(0)} µs + redis ${cap.redis_cpu.toFixed(0)} µs`;
          }
          log(line);
        } finally {
          await s.stop();
        }
      }
    }
  }
} finally {
  client.disconnect();
  await redis.close();
}

const rows: string[] = [
  "| run | base req/s | this req/s | base CPU µs/req (Sandgate + redis) | this CPU µs/req (Sandgate + redis) | this ÷ base, req/s | this ÷ base, Sandgate CPU | this ÷ base, redis CPU |",
  "| --- | --- | --- | --- | --- | --- | --- | --- |",
];
for (const key of new Set([...results.keys()].map((k) => k.slice(k.indexOf("|") + 1)))) {
  const base = results.get(`base|${key}`)!;
  const mine = results.get(`this|${key}`)!;
  const ratio = (f: (m: Measured) => number) => median(mine.map((m, i) => f(m) / f(base[i]!))).toFixed(2);
  const m = (list: Measured[], f: (m: Measured) => number) => median(list.map(f)).toFixed(0);
  rows.push(
    `| ${key.replace("|", ", ")} | ${m(base, (x) => x.rps)} | ${m(mine, (x) => x.rps)} | ${m(base, (x) => x.cpu)} + ${m(base, (x) => x.redis_cpu)} | ${m(mine, (x) => x.cpu)} + ${m(mine, (x) => x.redis_cpu)} | ${ratio((x) => x.rps)} | ${ratio((x) => x.cpu)} | ${ratio((x) => x.redis_cpu)} |`,
  );
}
console.log(rows.join("\n"));

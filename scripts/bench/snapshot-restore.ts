// `npm run bench:snapshots [-- --payments 10000 --reps 5]` (issue 36, item 4: "restored in under a
// second for 10,000 payments"): how long a QA snapshot of a sandbox holding N payments takes to put
// back, on each store, Sandgate in its own process (the bundle `npm start` runs):
//   1. a state file of N payments made from one of the fixtures' (unique ids and order numbers) is
//      imported (PUT /__sandbox/state) and saved as a snapshot;
//   2. M10001 is reset (its N payments gone), so the state differs from the snapshot;
//   3. POST /__sandbox/snapshots/bench/restore, timed from the request to its answer, `reps` times;
//      after each the export must hold the N payments again.
// Printed per store: the import's time, then the restore's median and slowest.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { startRedis, startRedisCluster } from "../redis-server.js";
import { startSandgate, type Service } from "./processes.js";

const { values: opts } = parseArgs({ options: { payments: { type: "string" }, reps: { type: "string" } } });
const PAYMENTS = Number(opts.payments ?? 10_000);
const REPS = Number(opts.reps ?? 5);

async function call(base: string, method: string, path: string, body?: string, type = "application/json"): Promise<string> {
  const res = await fetch(`${base}${path}`, { method, headers: body === undefined ? {} : { "content-type": type }, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text;
}

/** The sandbox's own file with N payments of M10001 added, made from its first one. */
function withPayments(file: string, n: number): string {
  const lines = file.trimEnd().split("\n");
  const end = lines.pop()!;
  const template = JSON.parse(lines.find((l) => l.startsWith('{"c":"transactions"') && l.includes('"merchant_id":"M10001"'))!) as {
    c: string;
    v: Record<string, unknown>;
  };
  const added: string[] = [];
  for (let i = 0; i < n; i++) {
    const v = { ...template.v, transaction_id: String(7_000_000_000_000_000 + i), order_no: `BENCH-${i}`, reference_no: `RNB${String(i).padStart(10, "0")}` };
    added.push(JSON.stringify({ c: "transactions", v }));
  }
  const count = (JSON.parse(end) as { end: { records: number } }).end.records + n;
  return `${[...lines, ...added, JSON.stringify({ end: { records: count } })].join("\n")}\n`;
}

const paymentsIn = (file: string) => file.split("\n").filter((l) => l.includes('"order_no":"BENCH-')).length;

async function measure(name: string, service: Service): Promise<void> {
  const base = service.url;
  try {
    const file = withPayments(await call(base, "GET", "/__sandbox/state"), PAYMENTS);
    let started = performance.now();
    await call(base, "PUT", "/__sandbox/state", file, "application/x-ndjson");
    const importMs = performance.now() - started;
    await call(base, "PUT", "/__sandbox/snapshots/bench", "{}");
    const restores: number[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      await call(base, "POST", "/__sandbox/reset", JSON.stringify({ merchant_id: "M10001" }));
      started = performance.now();
      await call(base, "POST", "/__sandbox/snapshots/bench/restore");
      restores.push(performance.now() - started);
      const now = await call(base, "GET", "/__sandbox/state");
      if (paymentsIn(now) !== PAYMENTS) throw new Error(`${name}: ${paymentsIn(now)} payments after the restore, not ${PAYMENTS}`);
    }
    restores.sort((a, b) => a - b);
    const ms = (x: number) => `${Math.round(x)} ms`;
    process.stdout.write(
      `${name.padEnd(16)} import ${ms(importMs).padStart(8)}   restore median ${ms(restores[Math.floor(REPS / 2)]!).padStart(8)}, slowest ${ms(restores.at(-1)!).padStart(8)}\n`,
    );
  } finally {
    await service.stop();
  }
}

process.stdout.write(`a snapshot of ${PAYMENTS} payments put back, ${REPS} times per store\n`);
await measure("memory", await startSandgate());
const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-snap-"));
try {
  await measure("--data", await startSandgate(["--data", join(dir, "state.json")]));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const redis = await startRedis();
try {
  await measure("Redis", await startSandgate(["--redis-url", redis.url]));
} finally {
  await redis.close();
}
const cluster = await startRedisCluster();
try {
  await measure("Redis Cluster", await startSandgate(["--redis-url", cluster.url, "--redis-cluster"]));
} finally {
  await cluster.close();
}

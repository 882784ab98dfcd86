// `npm run bench:faults [-- --seconds 10] [--cluster-only|--one-only]`
// Two replicas (each its own process) on one Redis and on a 3-master Redis Cluster, every node
// behind a fault proxy (scripts/fault-proxy.ts, each its own process), under the fault tests' load
// after 5 s of it unmeasured (fault-load.ts: 8 clients, one merchant paying, refunding over four captured payments until they
// run dry, querying) for each fault in turn: none, 2 % and 0.5 % of replies lost, 1 % of commands
// cut in half, every connection gone half-open every 2 s. Per run: requests, req/s against the run
// without faults, how many answered 5xx, what the proxies did, the slowest answer, and whether every
// replica then holds exactly what was acknowledged.
import { parseArgs } from "node:util";
import { redisBehindProxies, spawnFaultProxy, type FaultPlan } from "../fault-proxy.js";
import { check, load, prepare } from "./fault-load.js";
import { startSandgate } from "./processes.js";

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "10" }, "cluster-only": { type: "boolean", default: false }, "one-only": { type: "boolean", default: false } },
});
const ms = Number(values.seconds) * 1000;
const log = (text: string) => process.stderr.write(`${text}\n`);
const WARM_UP_MS = 5_000;

// each proxy draws its faults from the same seed (scripts/fault-proxy.ts's schedule): a run repeats its faults
const FAULTS: { name: string; faults: FaultPlan; halfOpen?: boolean }[] = [
  { name: "none", faults: {} },
  { name: "2 % of replies lost", faults: { loseReply: { seed: 1, every: 50 } } },
  { name: "0.5 % of replies lost", faults: { loseReply: { seed: 2, every: 200 } } },
  { name: "1 % of commands cut", faults: { resetMidCommand: { seed: 3, every: 100 } } },
  { name: "half-open every 2 s", faults: {}, halfOpen: true },
];

async function topology(cluster: boolean): Promise<string[]> {
  const redis = await redisBehindProxies(cluster, spawnFaultProxy);
  const { proxies } = redis;
  const flags = ["--redis-url", redis.url, ...(cluster ? ["--redis-cluster"] : []), "--redis-prefix", `faults-${process.pid}:`];
  const replicas = await Promise.all([startSandgate(flags), startSandgate(flags)]);
  const urls = replicas.map((r) => r.url);
  const counts = async () => {
    const all = await Promise.all(proxies.map((p) => p.counts()));
    return { lost: all.reduce((n, c) => n + c.lostReplies, 0), cut: all.reduce((n, c) => n + c.resets, 0), halfOpen: all.reduce((n, c) => n + c.halfOpen, 0) };
  };
  const rows: string[] = [];
  let baseline = 0;
  try {
    await load(urls, await prepare(urls[0]!), { ms: WARM_UP_MS }); // the replicas warmed up (JIT), unmeasured
    for (const { name, faults, halfOpen } of FAULTS) {
      const refundable = await prepare(urls[0]!);
      const before = await counts();
      await Promise.all(proxies.map((p) => p.set(faults)));
      const timer = halfOpen ? setInterval(() => void Promise.all(proxies.map((p) => p.halfOpen())), 2_000) : undefined;
      const result = await load(urls, refundable, { ms });
      clearInterval(timer);
      await Promise.all(proxies.map((p) => p.set({})));
      const after = await counts();
      const problems = await check(urls, result);
      const perSecond = result.requests / (ms / 1000);
      baseline ||= perSecond;
      const made =
        [
          after.lost - before.lost && `${after.lost - before.lost} replies lost`,
          after.cut - before.cut && `${after.cut - before.cut} commands cut`,
          after.halfOpen - before.halfOpen && `${after.halfOpen - before.halfOpen} connections half-open`,
        ]
          .filter(Boolean)
          .join(", ") || "—";
      const share = ((100 * result.failed) / result.requests).toFixed(2);
      rows.push(
        `| ${cluster ? "Cluster" : "one Redis"}, ${name} | ${result.requests} | ${(perSecond / baseline).toFixed(2)} | ${result.failed} (${share} %) | ${made} | ${Math.round(result.slowestMs)} | ${problems.length ? problems.join("; ") : "exactly what was acknowledged"} |`,
      );
      log(rows.at(-1)!);
    }
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    await redis.close();
  }
  return rows;
}

const rows = [...(values["cluster-only"] ? [] : await topology(false)), ...(values["one-only"] ? [] : await topology(true))];
process.stdout.write(
  [
    `${ms / 1000} s per run, 2 replicas, 8 clients, ${new Date().toISOString().slice(0, 10)}`,
    "",
    "| Redis, fault | requests | req/s × no faults | answered 5xx | what the proxies did | slowest ms | then, on both replicas |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n"),
);

// docs/replicas.md: while Redis is gone, every request answers 503 I0050 at once; once Redis accepts
// connections again, service resumes within 1 s. Two replicas on one Redis (its own, on a free
// port); Redis stopped for 3 s while both are paid through; then started again. Two figures: the
// slowest answer while Redis was gone (beside the slowest payment before it stopped), and the
// longest a replica took to pay normally again after Redis answered; and the same after a restart
// with 2.5 million keys to load.
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { startRedis } from "../../redis-server.js";
import { pay, timed, type SpeedPromise } from "../promise.js";
import { startSandgate, type Service } from "../processes.js";

/** Two replicas on a Redis of their own; what each scenario then does to it. */
async function outage<T>(run: (redis: Awaited<ReturnType<typeof startRedis>>, replicas: Service[]) => Promise<T>): Promise<T> {
  const redis = await startRedis();
  const flags = ["--redis-url", redis.url, "--redis-prefix", `outage-${process.pid}:`];
  const replicas = await Promise.all([startSandgate(flags), startSandgate(flags)]);
  try {
    return await run(redis, replicas);
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    await redis.close();
  }
}

export const redisDown: SpeedPromise = {
  name: "redis-down",
  doc: "docs/replicas.md",
  promise: "while Redis is gone, each request answers 503 I0050 within 100 ms",
  bound: 100,
  measure: () =>
    outage(async (redis, replicas) => {
      const before: number[] = [];
      for (let i = 0; i < 50; i++) for (const r of replicas) before.push(await timed(() => pay(r.url)));
      await redis.stop();
      const during: number[] = [];
      let not503 = 0;
      const until = performance.now() + 3_000;
      try {
        await Promise.all(
          replicas.map(async (r) => {
            while (performance.now() < until) {
              const started = performance.now();
              if ((await pay(r.url)) !== 503) not503++;
              during.push(performance.now() - started);
            }
          }),
        );
      } finally {
        await redis.start();
      }
      return { value: Math.max(...during), unit: "ms", quiet: Math.max(...before), note: `${during.length} requests while it was gone, ${not503} not 503` };
    }),
};

/** Redis stopped for a moment and started again (it answers once it has loaded what it held): ms until each replica pays again. */
async function backAfterRestart(redis: Awaited<ReturnType<typeof startRedis>>, replicas: Service[]) {
  for (const r of replicas) await pay(r.url);
  await redis.stop();
  await sleep(1_500);
  await redis.start(); // resolves once Redis answers, its data loaded
  const back = performance.now();
  const waited = await Promise.all(
    replicas.map(async (r) => {
      while ((await pay(r.url)) !== 200) await sleep(20);
      return performance.now() - back;
    }),
  );
  return { value: Math.max(...waited), unit: "ms", note: `each replica: ${waited.map((w) => `${Math.round(w)} ms`).join(", ")}` };
}

export const redisBack: SpeedPromise = {
  name: "redis-back",
  doc: "docs/replicas.md",
  promise: "service resumes within 1 s of Redis accepting connections again",
  bound: 1_000,
  measure: () => outage(backAfterRestart),
};

/** 2.5 million small keys: a restarted Redis takes seconds to load them, answering "loading" meanwhile */
const FILL = "for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do redis.call('SET', 'filler:' .. i, 'x') end";

export const redisBackAfterLoad: SpeedPromise = {
  name: "redis-back-after-load",
  doc: "docs/replicas.md",
  promise: "after a restart, service resumes within 1 s of Redis's load ending (a replica asks again every 200 ms, not after Redis's estimate)",
  bound: 1_000,
  measure: () =>
    outage(async (redis, replicas) => {
      const client = new Redis(redis.url);
      try {
        for (let from = 0; from < 2_500_000; from += 250_000) await client.eval(FILL, 0, from, from + 249_999);
      } finally {
        client.disconnect();
      }
      return backAfterRestart(redis, replicas);
    }),
};

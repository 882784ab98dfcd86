// Two replicas that reach Redis (one, or a Cluster in "replicas (cluster)") through a proxy that
// makes the network's faults (scripts/fault-proxy.ts): replies lost after Redis ran the commands,
// commands cut in half, connections that go silent, replies that come late; and Redis stopped. Each
// fault falls where a seeded schedule puts it, so a run makes exactly the faults it planned and a
// failure repeats with its seed. The load (scripts/bench/fault-load.ts) pays, refunds over a few
// captured payments until they run dry, and queries what was acknowledged, until its faults are
// made; then, faults off, every replica must hold exactly what was acknowledged: nothing missing,
// nothing applied twice, nothing over-refunded, the same on both. How fast the answers come under
// each fault, and how soon after Redis is back, is `npm run bench:faults`'s (docs/replicas.md).
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { inject } from "vitest";
import { faultSchedule, redisBehindProxies, startFaultProxy, type FaultProxy, type Faults } from "../scripts/fault-proxy.js";
import { check, load, prepare, type LoadResult } from "../scripts/bench/fault-load.js";
import { freshPrefix, spawnSandgate, type Replica } from "./replica-helpers.js";
import { Cluster, Redis } from "ioredis";
import { ACME, directPayment } from "./helpers.js";
import { until } from "./waiting.js";
import { defaultFixturesDir } from "../src/base/paths.js";
import { openRedisStore } from "../src/store/redis/redis-store.js";
import { TurnLost, type Store } from "../src/store/store.js";

const cluster = inject("redisCluster");

/** A Redis (or a Cluster) of this file's own, every node behind a fault proxy in this process. */
let redis: Awaited<ReturnType<typeof redisBehindProxies<FaultProxy>>> | undefined;
const ownRedis = async () => (redis ??= await redisBehindProxies(cluster, (port) => startFaultProxy(port)));
/** the faults of every proxy from now on (one schedule shared by all: it counts the chunks of every node) */
const setFaults = (faults: Faults) => redis?.proxies.forEach((p) => p.set(faults));
afterAll(async () => redis?.close());
afterEach(() => setFaults({}));

let prefix = "";
/** two replicas on a fresh prefix (`prefix`) */
async function twoReplicas(): Promise<string[]> {
  const { url } = await ownRedis();
  prefix = freshPrefix();
  const args = ["--redis-url", url, ...(cluster ? ["--redis-cluster"] : []), "--redis-prefix", prefix, "--seed", "faults"];
  const replicas: Replica[] = await Promise.all([spawnSandgate(args), spawnSandgate(args)]);
  return replicas.map((r) => r.url);
}

/** A payment through `url`: its answer. */
async function pay(url: string) {
  const res = await fetch(`${url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(directPayment()) });
  return { status: res.status, text: await res.text() };
}

/** Reads Redis (through the proxies, faults off). */
async function reading<T>(read: (redis: Redis | Cluster) => Promise<T>): Promise<T> {
  const { url } = await ownRedis();
  const client = cluster ? new Cluster([{ host: "127.0.0.1", port: Number(new URL(url).port) }]) : new Redis(url);
  try {
    return await read(client);
  } finally {
    client.disconnect();
  }
}

type Counts = FaultProxy["counts"];
const counted = (): Counts => {
  const sum = { connections: 0, lostReplies: 0, resets: 0, halfOpen: 0 };
  for (const p of redis!.proxies) for (const k of Object.keys(sum) as (keyof Counts)[]) sum[k] += p.counts[k];
  return sum;
};

/** No load runs longer than this: a run that has not made its faults by then has hung, and fails. */
const HANG_MS = 45_000;

/** the load until `done` says its faults are made, then the checks with the faults off; `made`: what the proxies did meanwhile */
async function underFaults(faults: Faults, done: (progress: LoadResult) => boolean): Promise<LoadResult & { problems: string[]; made: Counts }> {
  const urls = await twoReplicas();
  const refundable = await prepare(urls[0]!);
  const before = counted();
  setFaults(faults);
  const result = await load(urls, refundable, { ms: HANG_MS, goOn: (progress) => !done(progress) });
  setFaults({});
  const after = counted();
  const made = {
    connections: 0,
    lostReplies: after.lostReplies - before.lostReplies,
    resets: after.resets - before.resets,
    halfOpen: after.halfOpen - before.halfOpen,
  };
  return { ...result, problems: await check(urls, result), made };
}

/** what a request that failed under a fault may have been answered: Sandgate's own refusal, never a crash or a hang */
const STORE_UNAVAILABLE = /: 503 .*I0050:Sandbox store unavailable/;

describe(`replicas on ${cluster ? "a Redis Cluster" : "one Redis"} behind a network that fails`, () => {
  /** each network fault on a schedule: `count` faults, one chunk in `every` on average, from `seed` */
  const SCHEDULED: { name: string; kind: "loseReply" | "resetMidCommand"; made: keyof Counts; seed: number; every: number; count: number }[] = [
    { name: "Redis's replies lost", kind: "loseReply", made: "lostReplies", seed: 65_001, every: 50, count: 12 },
    { name: "commands cut in half and the connection reset", kind: "resetMidCommand", made: "resets", seed: 65_002, every: 100, count: 12 },
  ];
  for (const { name, kind, made, seed, every, count } of SCHEDULED) {
    test(`${count} ${name} (one chunk in ${every}, seed ${seed}): every replica holds exactly what was acknowledged`, async () => {
      const schedule = faultSchedule({ seed, every, count });
      const run = await underFaults({ [kind]: schedule }, () => schedule.made === count);
      expect(run.made[made], `seed ${seed}: ${schedule.made} of ${count} faults made before the load gave up`).toBe(count);
      expect(run.problems).toEqual([]);
      expect(run.failures.filter((f) => !STORE_UNAVAILABLE.test(f))).toEqual([]);
      expect(run.payments.length).toBeGreaterThan(0);
    }, 60_000);
  }

  // a replica notices a silent connection after SILENT_MS (1 s) and goes on on a new one; on a
  // Cluster the other nodes' connections (silent too) are found at the same time
  test("connections gone half-open three times, 40 requests apart: every replica holds exactly what was acknowledged", async () => {
    let times = 0;
    let at = 40;
    const run = await underFaults({}, (progress) => {
      if (progress.requests < at) return false;
      if (times === 3) return true;
      redis!.proxies.forEach((p) => p.halfOpen());
      times++;
      at = progress.requests + 40;
      return false;
    });
    expect(times).toBe(3);
    expect(run.made.halfOpen).toBeGreaterThanOrEqual(3);
    expect(run.problems).toEqual([]);
    expect(run.failures.filter((f) => !STORE_UNAVAILABLE.test(f))).toEqual([]);
  }, 60_000);

  test("replies 20 ms late each way: none fails, and the same holds", async () => {
    const run = await underFaults({ delayMs: 20 }, (progress) => progress.requests >= 40);
    expect(run.requests).toBeGreaterThanOrEqual(40);
    expect(run.failures).toEqual([]);
    expect(run.problems).toEqual([]);
  }, 60_000);

  test("Redis stopped: each request meanwhile answers 503 I0050; once it is back, both replicas answer normally again", async () => {
    const urls = await twoReplicas();
    for (const url of urls) expect((await pay(url)).status).toBe(200);
    await redis!.stop();
    let during: { status: number; text: string }[] = [];
    try {
      during = await Promise.all(urls.flatMap((url) => Array.from({ length: 10 }, () => pay(url))));
    } finally {
      await redis!.start();
    }
    expect(during).toHaveLength(20);
    expect(during.filter((a) => a.status !== 503 || !a.text.includes("I0050:Sandbox store unavailable"))).toEqual([]);
    // back: each replica pays again (asked until it does; the bench says how soon)
    for (const url of urls) await until(async () => (await pay(url)).status === 200, 20_000);
  }, 60_000);
});

describe("a commit whose reply does not come back is resolved by its fence, not guessed", () => {
  /** the chunk of commands that holds a merchant's COMMIT (its stream entry's members are among its arguments) */
  const commit = (commands: Buffer) => commands.includes('"nth":');
  /** the merchant's changes stream (one entry per commit) and its fences declared not landed */
  const written = () =>
    reading(async (redis) => {
      const entries = await redis.xrange(`${prefix}m:{${ACME.merchant_id}}:changes`, "-", "+");
      return { entries: entries.map(([, fields]) => fields[1]!), fenced: await redis.hlen(`${prefix}m:{${ACME.merchant_id}}:fenced`) };
    });

  test("it landed (the reply was lost after Redis ran it): the payment is acknowledged, and written once", async () => {
    const [a, b] = await twoReplicas();
    expect((await pay(a!)).status).toBe(200); // the merchant installed
    const lost = counted().lostReplies;
    setFaults({ next: { matches: commit, fault: "lose reply" } });
    const answer = await pay(a!);
    expect(counted().lostReplies).toBe(lost + 1);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain("<result_info>0000:Success</result_info>");
    const { entries, fenced } = await written();
    expect(fenced).toBe(0); // asked, the fence said: landed
    expect(new Set(entries).size).toBe(entries.length); // no commit written twice
    const id = /<transaction_id>([^<]+)</.exec(answer.text)![1]!;
    const seen = await fetch(`${b!}/__sandbox/transactions?merchant_id=${ACME.merchant_id}`).then(
      (r) => r.json() as Promise<{ transactions: { transaction_id: string }[] }>,
    );
    expect(seen.transactions.filter((t) => t.transaction_id === id)).toHaveLength(1);
  });

  test("it did not land (cut in half on its way): its fence is declared dead, it is sent again, the payment is acknowledged and written once", async () => {
    const [a, b] = await twoReplicas();
    expect((await pay(a!)).status).toBe(200);
    const resets = counted().resets;
    setFaults({ next: { matches: commit, fault: "cut" } });
    const answer = await pay(a!);
    expect(counted().resets).toBe(resets + 1);
    expect(answer.status).toBe(200);
    const { entries, fenced } = await written();
    expect(fenced).toBe(1); // asked, the fence said: not landed (and now never will)
    expect(new Set(entries).size).toBe(entries.length);
    const id = /<transaction_id>([^<]+)</.exec(answer.text)![1]!;
    const seen = await fetch(`${b!}/__sandbox/transactions?merchant_id=${ACME.merchant_id}`).then(
      (r) => r.json() as Promise<{ transactions: { transaction_id: string }[] }>,
    );
    expect(seen.transactions.filter((t) => t.transaction_id === id)).toHaveLength(1);
  });
});

describe("a unit whose turn ran out before it wrote anything (a replica cut off for longer than the lease)", () => {
  /** a unit that renames the merchant; on its first run another replica takes the turn before it commits */
  const renaming = (runs: { n: number }) => async (unit: Store) => {
    runs.n++;
    const merchant = unit.records.merchant(ACME.merchant_id)!;
    merchant.name = `renamed by run ${runs.n}`;
    unit.records.changed("merchants", merchant);
    if (runs.n === 1) await reading((redis) => redis.set(`${prefix}m:{${ACME.merchant_id}}:lock`, "another replica", "PX", 300));
    await unit.commit(true);
    return merchant.name;
  };
  const open = async () => {
    const { url } = await ownRedis();
    prefix = freshPrefix();
    const options = { url, cluster, prefix, fixturesDir: defaultFixturesDir, seed: "turn-lost" };
    return Promise.all([openRedisStore(options), openRedisStore(options)]);
  };
  const nameOn = (store: Store) => store.unit((unit) => unit.records.merchant(ACME.merchant_id)!.name, { merchant: ACME.merchant_id });

  test("a gateway request's unit (again): run again from its start once the turn is free, and only that run is written", async () => {
    const [one, other] = await open();
    try {
      const runs = { n: 0 };
      expect(await one.unit(renaming(runs), { merchant: ACME.merchant_id, again: true })).toBe("renamed by run 2");
      expect(runs.n).toBe(2);
      expect(await nameOn(other)).toBe("renamed by run 2");
    } finally {
      await Promise.all([one.close(), other.close()]);
    }
  });

  test("any other unit: refused (503), and nothing of it is written", async () => {
    const [one, other] = await open();
    try {
      const before = await nameOn(other);
      const runs = { n: 0 };
      await expect(one.unit(renaming(runs), { merchant: ACME.merchant_id })).rejects.toThrow(TurnLost);
      expect(runs.n).toBe(1);
      // the other replica's turn lapses
      await until(async () => (await reading((redis) => redis.exists(`${prefix}m:{${ACME.merchant_id}}:lock`))) === 0, 10_000);
      expect(await nameOn(other)).toBe(before);
      expect(await nameOn(one)).toBe(before); // the refused unit's change is gone from its own copy too
    } finally {
      await Promise.all([one.close(), other.close()]);
    }
  });
});

describe("the replicas' channel (what sandgate listen's replicas tell each other)", () => {
  test(
    "a channel connection gone half-open is noticed and made again: what one replica tells reaches the other within seconds",
    { timeout: 40_000 },
    async () => {
      const { url } = await ownRedis();
      prefix = freshPrefix();
      const options = { url, cluster, prefix, fixturesDir: defaultFixturesDir, seed: "crosstalk" };
      const [one, other] = await Promise.all([openRedisStore(options), openRedisStore(options)]);
      try {
        const heard: unknown[] = [];
        other.crosstalk!.hear((message) => heard.push(message));
        /** ms until `word`, told every 250 ms, was heard (undefined: not within `ms`) */
        const heardWithin = async (word: string, ms: number) => {
          const started = Date.now();
          while (Date.now() - started < ms) {
            one.crosstalk!.tell(word);
            await new Promise((r) => setTimeout(r, 250));
            if (heard.includes(word)) return Date.now() - started;
          }
          return undefined;
        };
        expect(await heardWithin("before", 5_000)).toBeDefined();
        // every connection open now passes nothing more, and none is closed: the subscribed one sends nothing to notice it by
        redis!.proxies.forEach((p) => p.halfOpen());
        expect(await heardWithin("after", 15_000)).toBeDefined();
      } finally {
        await Promise.all([one.close(), other.close()]);
      }
    },
  );
});

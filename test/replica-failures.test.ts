// Replicas when something fails: Redis stopped, restarted under load; a replica killed or stopped
// under load loses nothing it acknowledged; on a Cluster a node down holds up only its merchants;
// a bad --redis-prefix or an unreachable Redis at start is said clearly.
import { afterAll, describe, expect, test } from "vitest";
import { inject } from "vitest";
import { spawn } from "node:child_process";
import { ACME, ANY_SIGNATURE, directPayment, parseXml } from "./helpers.js";
import { type Replica } from "./replica-helpers.js";
import { ENVELOPE, authorised, json, post, replicas, statusOf } from "./replica-requests.js";
import { Cluster } from "ioredis";
import { until } from "./waiting.js";
import { freePort, startRedis, startRedisCluster } from "../scripts/redis-server.js";

// on one Redis of their own, stopped and started (in "replicas (cluster)" too), and a Redis Cluster of their own
describe("replicas and failures", () => {
  // started by the first test that needs it: a run that filters these tests out starts none (and
  // leaves none behind, since afterAll does not run when every test is skipped)
  let started: ReturnType<typeof startRedis> | undefined;
  const ownRedis = () => (started ??= startRedis());
  afterAll(async () => (await started)?.close());

  test("Redis stopped and started again: 503 I0050 in each format while it is away, then service as before", async () => {
    const redis = await ownRedis();
    const [a, b] = await replicas(2, redis.url);
    const p = await authorised(a!);
    await redis.stop();

    const xml = await post(b!, "/v1/authorise", directPayment());
    expect(xml.status).toBe(503);
    expect(parseXml(xml.text).result_info).toBe("I0050:Sandbox store unavailable");
    const batch = await post(a!, "/v1/capture", { ...ENVELOPE, capture_orders: [p] });
    expect(batch.status).toBe(503);
    expect(JSON.parse(batch.text)).toMatchObject({ return_status: "0", return_message: "I0050:Sandbox store unavailable" });
    const operator = await fetch(`${a!.url}/__sandbox/transactions`);
    expect(operator.status).toBe(503);
    expect(await operator.json()).toEqual({ error: "store_unavailable", message: "I0050:Sandbox store unavailable" });
    const page = await fetch(`${b!.url}/__sandbox/`);
    expect(page.status).toBe(503);
    expect(await page.text()).toContain("I0050:Sandbox store unavailable");

    await redis.start();
    // the client reconnects by itself: the capture is asked until it is answered
    let capture = "";
    await until(async () => {
      const res = await post(b!, "/v1/capture", { ...ENVELOPE, capture_orders: [p] });
      if (res.status === 200) capture = JSON.parse(res.text).capture_orders[0].capture_status;
      return capture !== "";
    });
    expect(capture).toBe("1"); // the payment authorised before the outage is still there
    // A reconnects by itself too, maybe a moment after B: its query is asked until it answers
    await until(async () => (await statusOf(a!, p.transaction_id)) === "3000");
  });

  // how soon after Redis is back: npm run bench:faults
  test("a Redis restart under load: every replica answers normally again once Redis accepts connections", async () => {
    const redis = await ownRedis();
    const all = await replicas(2, redis.url);
    let stop = false;
    let answered = 0;
    // load on both replicas, so the turn is held (and in Redis's append-only file) when it stops
    const load = all.map(async (replica) => {
      while (!stop)
        await fetch(`${replica.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(directPayment()) })
          .then((r) => r.text())
          .then(() => answered++)
          .catch(() => undefined);
    });
    await until(() => answered >= 20);
    await redis.stop();
    const refused = await post(all[0]!, "/v1/authorise", directPayment());
    expect(refused.status).toBe(503);
    await redis.start();
    for (const replica of all) await until(async () => (await post(replica, "/v1/authorise", directPayment())).status === 200);
    stop = true;
    await Promise.all(load);
  }, 60_000);

  test("kill -9 one replica under load: the other keeps answering and every acknowledged payment is there", async () => {
    const redis = await ownRedis();
    const [a, b] = await replicas(2, redis.url);
    const acknowledged: string[] = [];
    let failedOnB = 0;
    let stop = false;
    const client = async (replica: Replica, onB: boolean) => {
      while (!stop) {
        const res = await fetch(`${replica.url}/v1/authorise`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(directPayment()),
        }).catch(() => undefined);
        if (!res) {
          if (onB) failedOnB++;
          if (!onB) return; // A is gone
          continue;
        }
        const answer = parseXml(await res.text());
        if (res.status === 200) acknowledged.push(String(answer.transaction_id));
        else if (onB) failedOnB++;
      }
    };
    const load = [client(a!, false), client(a!, false), client(b!, true), client(b!, true)];
    await until(() => acknowledged.length >= 20);
    a!.child.kill("SIGKILL");
    const countAtKill = acknowledged.length;
    await until(() => acknowledged.length >= countAtKill + 20); // B goes on (once A's turn, if it held one, lapsed)
    stop = true;
    await Promise.all(load);
    expect(acknowledged.length).toBeGreaterThan(countAtKill); // B went on answering
    expect(failedOnB).toBe(0);
    const known = new Set(
      ((await json(b!, "/__sandbox/transactions?merchant_id=M10001")).body.transactions as { transaction_id: string }[]).map((t) => t.transaction_id),
    );
    expect(acknowledged.filter((id) => !known.has(id))).toEqual([]);
  }, 30_000);

  // how long B's longest gap is meanwhile: npm run bench:replicas
  test("SIGTERM one replica under load: it hands over and exits 0, and the other answers every payment meanwhile", async () => {
    const [a, b] = await replicas(2);
    let stop = false;
    let answeredOnB = 0;
    let failedOnB = 0;
    const onB = async () => {
      while (!stop) {
        const res = await post(b!, "/v1/authorise", directPayment());
        if (res.status !== 200) failedOnB++;
        answeredOnB++;
      }
    };
    let answeredOnA = 0;
    const onA = async () => {
      while (!stop) {
        const res = await fetch(`${a!.url}/v1/authorise`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(directPayment()),
        }).catch(() => undefined);
        if (!res) return;
        await res.text();
        answeredOnA++;
      }
    };
    const load = [onA(), onA(), onB(), onB()];
    await until(() => answeredOnA >= 10 && answeredOnB >= 10);
    const exited = new Promise<number | null>((resolve) => a!.child.once("exit", resolve));
    a!.child.kill("SIGTERM");
    expect(await exited).toBe(0);
    const atExit = answeredOnB;
    await until(() => answeredOnB >= atExit + 20);
    stop = true;
    await Promise.all(load);
    expect(failedOnB).toBe(0);
  }, 60_000);

  // a cluster of its own, one node of which is stopped and started
  test.runIf(inject("redisCluster"))(
    "a Redis Cluster node down: only the merchants whose slots it holds wait, and they are back with their data when it is",
    async () => {
      const cluster = await startRedisCluster();
      const nodes = new Cluster([{ host: "127.0.0.1", port: cluster.ports[0]! }]);
      try {
        await nodes.ping();
        const nodeOf = async (tag: string) => {
          const slot = Number(await nodes.cluster("KEYSLOT", `{${tag}}`));
          const range = (await nodes.cluster("SLOTS")).find(([from, to]) => slot >= from && slot <= to)!;
          return cluster.ports.indexOf(Number(range[2]![1]));
        };
        const settingsNode = await nodeOf("g");
        const candidates = await Promise.all(
          Array.from({ length: 30 }, async (_, i) => ({ id: `MC${process.pid}-${i}`, node: await nodeOf(`MC${process.pid}-${i}`) })),
        );
        const x = candidates.find((c) => c.node !== settingsNode)!;
        const y = candidates.find((c) => c.node !== x.node)!;
        const [a, b] = await replicas(2, cluster.url, [], true);
        const pay = (replica: Replica, merchant: string) => post(replica, "/v1/authorise", directPayment({ merchant_id: merchant }));
        const first = parseXml((await pay(a!, x.id)).text);
        expect(first.result_info).toBe("0000:Success");
        expect((await pay(b!, y.id)).status).toBe(200);

        await cluster.stop(x.node);
        // the other merchants go on at once; x's requests are refused in their format, not held
        for (const replica of [a!, b!]) expect((await pay(replica, y.id)).status).toBe(200);
        const refused = await pay(b!, x.id);
        expect(refused.status).toBe(503);
        expect(parseXml(refused.text).result_info).toBe("I0050:Sandbox store unavailable");

        await cluster.start(x.node);
        await until(async () => (await pay(a!, x.id)).status === 200);
        const found = JSON.parse(
          (
            await post(b!, "/v1/retrievalTrans", {
              merchant_id: x.id,
              account_id: ACME.account_id,
              encryption_data: ANY_SIGNATURE,
              transaction_id: String(first.transaction_id),
            })
          ).text,
        );
        expect(found.orders_list[0]?.transaction_id).toBe(String(first.transaction_id)); // kept across the node's restart
      } finally {
        nodes.disconnect();
        await cluster.close();
      }
    },
    60_000,
  );

  /** Sandgate started on Redis at a port where nothing listens, with `more` flags: its exit code and what it said on stderr */
  async function startRefused(more: string[] = []) {
    const port = await freePort();
    const child = spawn(process.execPath, [inject("sandgateMain"), "--port", "0", "--redis-url", `redis://127.0.0.1:${port}/0`, ...more], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "" },
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    return { port, code, stderr };
  }

  test("a --redis-prefix with braces on a Cluster: a clear message and exit code 1, before connecting", async () => {
    const { code, stderr } = await startRefused(["--redis-cluster", "--redis-prefix", "team{}:"]); // nothing listens: the prefix is refused first
    expect(code).toBe(1);
    expect(stderr).toContain(
      '--redis-prefix "team{}:" holds { or }: on a Redis Cluster they would choose the hash slot of every key; pick a prefix without braces',
    );
  });

  test("Redis unreachable at start: a clear message and exit code 1", async () => {
    const { port, code, stderr } = await startRefused();
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`cannot reach Redis at redis://127\\.0\\.0\\.1:${port}/0 \\(.*ECONNREFUSED.*\\); start it, or check --redis-url`));
  });
});

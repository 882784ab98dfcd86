// Merchants as partitions of a shared store: a replica killed under load holds up only its own
// merchants, for its lease; ids with braces; lists across replicas; what Redis keeps of a card;
// a large merchant installed in one turn; a unit longer than the lease keeps its turn; a slow
// playground payment holds none. On one Redis, and on a Cluster (a merchant's keys on one node).
import { afterEach, describe, expect, test, vi } from "vitest";
import { inject } from "vitest";
import { ACME, ANY_SIGNATURE, directPayment, parseXml } from "./helpers.js";
import { freshPrefix, redisDump, redisFlags, spawnSandgate, type Replica } from "./replica-helpers.js";
import { json, post, replicas } from "./replica-requests.js";
import { defaultFixturesDir } from "../src/base/paths.js";
import { setTimeout as sleep } from "node:timers/promises";
import { until } from "./waiting.js";
import { openRedisStore } from "../src/store/redis/redis-store.js";
import { loadFixtures } from "../src/store/fixtures/fixtures.js";
import { stateFromFixtures } from "../src/store/fixtures/initial-state.js";

describe("merchants as partitions", () => {
  /** Payments of `merchant` on `replica` (two at a time) until stopped: how many were answered, and how many failed. */
  function paying(replica: Replica, merchant: string) {
    let stop = false;
    const counts = { answered: 0, failed: 0 };
    const loop = async () => {
      while (!stop) {
        const res = await fetch(`${replica.url}/v1/authorise`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(directPayment({ merchant_id: merchant })),
        }).catch(() => undefined);
        if (!res) return; // the replica is gone
        if (res.status !== 200) counts.failed++;
        await res.text();
        counts.answered++;
      }
    };
    const running = [loop(), loop()];
    return {
      counts,
      async stop() {
        stop = true;
        await Promise.all(running);
        return counts;
      },
    };
  }

  // how long each merchant waits (the dead replica's lease for its own, nothing for the others) is
  // `npm run bench:replicas`'s figure; here: both go on, and none fails
  test("kill -9 a replica under load: its merchant's payments go on on the other replica once its lease lapses, another merchant's never stop; none fails", async () => {
    const [a, b] = await replicas();
    const x = `MX${process.pid}`;
    const y = `MY${process.pid}`;
    const xOnA = paying(a!, x);
    const xOnB = paying(b!, x);
    const yOnB = paying(b!, y);
    await until(() => xOnA.counts.answered >= 10 && xOnB.counts.answered >= 10 && yOnB.counts.answered >= 10);
    a!.child.kill("SIGKILL");
    const [x1, y1] = [xOnB.counts.answered, yOnB.counts.answered];
    await until(() => xOnB.counts.answered >= x1 + 10 && yOnB.counts.answered >= y1 + 10);
    const [, x2, y2] = await Promise.all([xOnA.stop(), xOnB.stop(), yOnB.stop()]);
    expect(y2.failed).toBe(0);
    expect(x2.failed).toBe(0);
  }, 60_000);

  // On a Cluster a merchant's keys share its id as their hash tag; "m:{}x}:lock" has an empty one, so Redis would hash each whole key
  test('merchant ids with braces ("}", "}x{y}", "a}b", "{") are served like any other: paid on A, found and captured on B', async () => {
    const [a, b] = await replicas();
    for (const merchant_id of ["}", "}x{y}", "a}b", "{"]) {
      const body = directPayment({ merchant_id });
      const paid = parseXml((await post(a!, "/v1/authorise", body)).text);
      expect(paid.result_info, merchant_id).toBe("0000:Success");
      const envelope = { merchant_id, account_id: body.account_id, encryption_data: ANY_SIGNATURE };
      const found = JSON.parse((await post(b!, "/v1/retrievalTrans", { ...envelope, transaction_id: paid.transaction_id })).text);
      expect(found.orders_list?.[0]?.order_no, merchant_id).toBe(body.order_no);
      const order = {
        transaction_id: String(paid.transaction_id),
        order_no: String(body.order_no),
        currency: String(body.currency),
        amount: String(body.amount),
      };
      const captured = JSON.parse((await post(b!, "/v1/capture", { ...envelope, capture_orders: [order] })).text);
      expect(captured.capture_orders[0].capture_status, merchant_id).toBe("1");
    }
  });

  test("lists read every merchant: one served only by A is on B's dashboard and operator lists", async () => {
    const [a, b] = await replicas();
    const merchant = `ML${process.pid}`;
    const paid = parseXml((await post(a!, "/v1/authorise", directPayment({ merchant_id: merchant }))).text);
    const listed = (await json(b!, `/__sandbox/transactions?merchant_id=${merchant}`)).body.transactions as { transaction_id: string }[];
    expect(listed.map((t) => t.transaction_id)).toEqual([String(paid.transaction_id)]);
    for (const page of ["/__sandbox/ui/receiver-check", `/__sandbox/ui/transactions?merchant_id=${merchant}`]) {
      const html = await (await fetch(`${b!.url}${page}`)).text();
      expect(html, page).toContain(merchant);
    }
  });

  // every key of the prefix read back (from every master of a cluster)
  test("nothing Sandgate keeps in Redis holds the card number or security code of a payment", async () => {
    const prefix = freshPrefix();
    const [a, b] = await Promise.all([
      spawnSandgate([...redisFlags(prefix), "--seed", "replicas"]),
      spawnSandgate([...redisFlags(prefix), "--seed", "replicas"]),
    ]);
    const card = "4000056655665556"; // Luhn-valid, named by no scenario rule
    for (const replica of [a, b])
      expect(parseXml((await post(replica, "/v1/authorise", directPayment({ card, security_code: "9731" }))).text).result_info).toBe("0000:Success");
    await json(b, "/__sandbox/requests"); // B has read A's entry back from the shared log
    const everything = await redisDump(prefix);
    expect(everything).toContain("400005******5556"); // the payments and the request log are there, masked
    expect(everything).not.toContain(card);
    // the code as a value of its own (replica ids, order numbers and times may hold its digits by chance: once "33a973141")
    expect(everything).not.toMatch(/(^|[^\w-])9731($|[^\w-])/);
  });

  test("a state file of one merchant with 60,000 payments is installed in one turn, and another replica finds them", async () => {
    const options = { url: inject("redisUrl"), cluster: inject("redisCluster"), prefix: freshPrefix(), fixturesDir: defaultFixturesDir, seed: "big" };
    const [one, two] = await Promise.all([openRedisStore(options), openRedisStore(options)]);
    try {
      const state = stateFromFixtures(loadFixtures(defaultFixturesDir), "big");
      const paid = state.transactions.find((t) => t.merchant_id === ACME.merchant_id)!;
      for (let i = 0; i < 60_000; i++) state.transactions.push({ ...paid, transaction_id: `BIG${i}`, order_no: `BIG-${i}` });
      await one.restore(state, ACME.merchant_id); // (its arguments spread into one call overflowed the stack at 50,000)
      const found = await two.unit(
        (unit) => [unit.records.transactionsByOrder(ACME.merchant_id, "BIG-0").length, unit.records.transactionsByOrder(ACME.merchant_id, "BIG-59999").length],
        { merchant: ACME.merchant_id },
      );
      expect(found).toEqual([1, 1]);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  }, 30_000);

  /** a lease this test can outlast in a moment: 300 ms (SANDGATE_TIMINGS, read by the stores this process opens) */
  const SHORT_LEASE_MS = 300;
  afterEach(() => void vi.unstubAllEnvs());
  /** Two replicas' stores on a fresh prefix, with the short lease; and a signal the long unit gives once it holds its turn. */
  async function twoStoresOnAShortLease() {
    vi.stubEnv("SANDGATE_TIMINGS", JSON.stringify({ leaseMs: SHORT_LEASE_MS }));
    const options = { url: inject("redisUrl"), cluster: inject("redisCluster"), prefix: freshPrefix(), fixturesDir: defaultFixturesDir, seed: "lease" };
    const stores = await Promise.all([openRedisStore(options), openRedisStore(options)]);
    let started!: () => void;
    const holding = new Promise<void>((resolve) => (started = resolve));
    return { stores, started: () => started(), holding };
  }

  test("a unit that runs longer than the lease keeps its merchant's turn: another replica waits for it, and its commit is written", async () => {
    const {
      stores: [one, two],
      started,
      holding,
    } = await twoStoresOnAShortLease();
    try {
      const order: string[] = [];
      const long = one.unit(
        async (unit) => {
          started();
          const merchant = unit.records.merchant(ACME.merchant_id)!;
          merchant.name = "Renamed in a long unit";
          unit.records.changed("merchants", merchant);
          await sleep(3 * SHORT_LEASE_MS); // work that outlasts the lease
          await unit.commit();
          order.push("long unit committed");
        },
        { merchant: ACME.merchant_id },
      );
      await holding;
      const other = two.unit(
        (unit) => {
          order.push("other replica's unit ran");
          return unit.records.merchant(ACME.merchant_id)!.name;
        },
        { merchant: ACME.merchant_id },
      );
      const [, name] = await Promise.all([long, other]);
      expect(order).toEqual(["long unit committed", "other replica's unit ran"]); // it waited for the whole unit, past the lease
      expect(name).toBe("Renamed in a long unit");
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  }, 20_000);

  test("a unit of every merchant (a list, a settings change) that runs longer than the lease keeps the settings' turn: another replica's waits for it", async () => {
    const {
      stores: [one, two],
      started,
      holding,
    } = await twoStoresOnAShortLease();
    try {
      const order: string[] = [];
      const long = one.unit(async () => {
        started();
        await sleep(3 * SHORT_LEASE_MS); // work that outlasts the lease
        order.push("long unit ended");
      });
      await holding;
      const other = two.unit(() => void order.push("other replica's unit ran"));
      await Promise.all([long, other]);
      expect(order).toEqual(["long unit ended", "other replica's unit ran"]); // it waited for the whole unit, past the lease
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  }, 20_000);

  test("a playground payment waiting on a slow scenario holds no turn: a scenario switch and another merchant's list on the other replica are answered", async () => {
    const [a, b] = await replicas();
    const merchant = `MP${process.pid}`;
    // the playground pays as a merchant of the sandbox: one made by a payment; its first authorisation hangs
    expect(parseXml((await post(a!, "/v1/authorise", directPayment({ merchant_id: merchant, account_id: "ACC-P" }))).text).result_info).toBe("0000:Success");
    expect((await json(a!, `/__sandbox/scenarios/bindings/${merchant}`, { method: "PUT", body: JSON.stringify({ name: "slow-and-flaky" }) })).status).toBe(200);
    const form = await fetch(`${a!.url}/__sandbox/ui/playground`);
    const cookie = /sandgate_form=[^;]+/.exec(form.headers.get("set-cookie") ?? "")?.[0];
    const token = /name="_form" value="([0-9a-f]+)"/.exec(await form.text())?.[1];
    expect(cookie && token).toBeTruthy();
    const stop = new AbortController();
    const paying = fetch(`${a!.url}/__sandbox/ui/playground`, {
      method: "POST",
      redirect: "manual",
      signal: stop.signal,
      headers: { cookie: cookie!, origin: a!.url, "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        _form: token!,
        kind: "card",
        merchant_id: merchant,
        account_id: "ACC-P",
        amount: "10.00",
        currency: "USD",
        card: "4242424242424242",
        expiration_month: "12",
        expiration_year: "2031",
        security_code: "123",
      }),
    }).catch(() => undefined);
    // answered while the playground's payment is made on the other replica (how soon: npm run bench:replicas)
    expect((await json(b!, "/__sandbox/scenarios/global", { method: "PUT", body: JSON.stringify({ name: "declines" }) })).status).toBe(200);
    expect((await json(b!, `/__sandbox/transactions?merchant_id=${ACME.merchant_id}`)).status).toBe(200);
    stop.abort();
    await paying;
  }, 30_000);

  test("a global scenario switch on one replica decides the next payment of any merchant on the other", async () => {
    const [a, b] = await replicas();
    const merchant = `MS${process.pid}`;
    // B holds the merchant (and its turn, under load) when A switches
    expect(parseXml((await post(b!, "/v1/authorise", directPayment({ merchant_id: merchant }))).text).result_info).toBe("0000:Success");
    const switched = await json(a!, "/__sandbox/scenarios/global", { method: "PUT", body: JSON.stringify({ name: "declines" }) });
    expect(switched.status).toBe(200);
    expect(parseXml((await post(b!, "/v1/authorise", directPayment({ merchant_id: merchant }))).text).result_info).toMatch(/^D0005/);
    expect(parseXml((await post(b!, "/v1/authorise", directPayment())).text).result_info).toMatch(/^D0005/);
  });
});

// Several Sandgate processes on one Redis behave as one sandbox: what one does, the others see at
// once; races across replicas have one winner; Redis going away costs 503s, not state; a replica
// that dies loses nothing it acknowledged. Runs in the "replicas" project (real redis-server).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server } from "node:http";
import { afterAll, afterEach, describe, expect, test, vi } from "vitest";
import { inject } from "vitest";
import { ACME, ANY_SIGNATURE, directPayment, parseXml, signRequest } from "./helpers.js";
import { freshPrefix, redisClient, redisDump, redisFlags, spawnSandgate, type Replica } from "./replica-helpers.js";
import { Cluster } from "ioredis";
import { defaultFixturesDir } from "../src/base/paths.js";
import { setTimeout as sleep } from "node:timers/promises";
import { until } from "./waiting.js";
import { openRedisStore } from "../src/store/redis/redis-store.js";
import { loadFixtures } from "../src/store/fixtures/fixtures.js";
import { stateFromFixtures } from "../src/store/fixtures/initial-state.js";
import { startSandbox } from "../src/server/sandbox.js";
import { freePort, startRedis, startRedisCluster } from "../scripts/redis-server.js";

const ENVELOPE = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, encryption_data: ANY_SIGNATURE };

async function post(replica: Replica, path: string, body: Record<string, unknown>) {
  const res = await fetch(`${replica.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}
const json = async (replica: Replica, path: string, init: RequestInit = {}) => {
  const res = await fetch(`${replica.url}${path}`, { ...init, headers: { "content-type": "application/json", ...init.headers } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** Two (or more) replicas on a fresh prefix of the run's Redis, or of a Redis (a cluster with `cluster`) at `url`. */
async function replicas(n = 2, url?: string, extra: string[] = [], cluster = false): Promise<Replica[]> {
  const args = [...(url ? redisFlags(freshPrefix(), url, cluster) : redisFlags(freshPrefix())), "--seed", "replicas", ...extra];
  return Promise.all(Array.from({ length: n }, () => spawnSandgate(args)));
}

async function authorised(replica: Replica, amount = "100.00") {
  const body = directPayment({ amount });
  const answer = parseXml((await post(replica, "/v1/authorise", body)).text);
  expect(answer.result_info).toBe("0000:Success");
  return { transaction_id: String(answer.transaction_id), order_no: String(body.order_no), currency: "USD", amount };
}

const statusOf = async (replica: Replica, transactionId: string) =>
  String(JSON.parse((await post(replica, "/v1/retrievalTrans", { ...ENVELOPE, transaction_id: transactionId })).text).orders_list[0]?.payment_status);

describe("replicas on one Redis", () => {
  test("a merchant's own clock moved through A: B settles that merchant's refund and not another's, and both tell its time", async () => {
    const [a, b] = await replicas();
    const refundIn = async (merchant: string) => {
      const body = directPayment({ merchant_id: merchant, account_id: "A1", amount: "20.00" });
      const paid = parseXml((await post(a!, "/v1/authorise", body)).text);
      const order = { transaction_id: String(paid.transaction_id), order_no: String(body.order_no), currency: "USD", amount: "20.00" };
      const envelope = { merchant_id: merchant, account_id: "A1", encryption_data: ENVELOPE.encryption_data };
      await post(a!, "/v1/capture", { ...envelope, capture_orders: [order] });
      // .17 settles an hour after it is accepted
      return JSON.parse((await post(a!, "/v1/refund", { ...envelope, refund_orders: [{ ...order, refund_amount: "5.17" }] })).text).refund_orders[0]
        .refund_reference_id as string;
    };
    const [mine, theirs] = [await refundIn("CLOCKED-A"), await refundIn("CLOCKED-B")];
    expect((await json(a!, "/__sandbox/clock", { method: "POST", body: JSON.stringify({ advance: "2h", merchant_id: "CLOCKED-A" }) })).status).toBe(200);
    const stateOn = async (r: Replica, ref: string) =>
      ((await json(r, `/__sandbox/refunds`)).body.refunds as { refund_reference_id: string; state: string }[]).find((x) => x.refund_reference_id === ref)
        ?.state;
    expect([await stateOn(b!, mine), await stateOn(b!, theirs)]).toEqual(["processed", "accepted"]);
    for (const r of [a!, b!]) {
      expect((await json(r, "/__sandbox/clock?merchant_id=CLOCKED-A")).body.offset_ms).toBe(7_200_000);
      expect((await json(r, "/__sandbox/clock?merchant_id=CLOCKED-B")).body.offset_ms).toBe(0);
    }
    // frozen through B: A dates the merchant's next payment at the moment it stands at
    const frozen = await json(b!, "/__sandbox/clock/freeze", { method: "POST", body: JSON.stringify({ merchant_id: "CLOCKED-A" }) });
    expect(frozen.body).toMatchObject({ frozen: true });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await json(a!, "/__sandbox/clock?merchant_id=CLOCKED-A")).body).toMatchObject({ now: frozen.body.now, frozen: true });
    const standing = parseXml((await post(a!, "/v1/authorise", directPayment({ merchant_id: "CLOCKED-A", account_id: "A1" }))).text);
    const dated = (await json(b!, `/__sandbox/transactions?merchant_id=CLOCKED-A`)).body.transactions as { transaction_id: string; created_at: string }[];
    expect(dated.find((t) => t.transaction_id === String(standing.transaction_id))?.created_at).toBe(frozen.body.now);
  });

  test("the state file: B exports what A wrote; imported through A, both replicas see exactly the file", async () => {
    const [a, b] = await replicas();
    const kept = await authorised(a!);
    const file = await (await fetch(`${b!.url}/__sandbox/state`)).text();
    expect(file.split("\n")[0]).toMatch(/^\{"sandgate_state":1,"merchant":null,/);
    expect(file).toContain(`"transaction_id":"${kept.transaction_id}"`);
    const later = await authorised(b!);
    const put = await fetch(`${a!.url}/__sandbox/state?all=true`, { method: "PUT", headers: { "content-type": "application/x-ndjson" }, body: file });
    expect(put.status).toBe(200);
    const records = (f: string) => f.trimEnd().split("\n").slice(1, -1).sort();
    for (const r of [a!, b!]) {
      const again = await (await fetch(`${r.url}/__sandbox/state`)).text();
      expect(records(again)).toEqual(records(file));
      expect(again).not.toContain(`"transaction_id":"${later.transaction_id}"`);
    }
    // the imported payment goes on, on either replica
    expect(JSON.parse((await post(b!, "/v1/capture", { ...ENVELOPE, capture_orders: [kept] })).text).capture_orders[0].capture_status).toBe("1");
  });

  test("a state moved memory → this shared store → --data loses nothing: the first and the last file hold the same records", async () => {
    const put = (url: string, file: string) =>
      fetch(`${url}/__sandbox/state?all=true`, { method: "PUT", headers: { "content-type": "application/x-ndjson" }, body: file });
    const records = (file: string) => file.trimEnd().split("\n").slice(1, -1).sort();
    const memory = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "moved" });
    const dir = mkdtempSync(join(tmpdir(), "sandgate-moved-"));
    const onDisk = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "moved-disk", data: join(dir, "state.json") });
    try {
      for (const amount of ["10.00", "20.00", "30.00"])
        await fetch(`${memory.url}/v1/authorise`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(directPayment({ amount })),
        });
      const first = await (await fetch(`${memory.url}/__sandbox/state`)).text();
      const [a, b] = await replicas();
      expect((await put(a!.url, first)).status).toBe(200);
      const fromRedis = await (await fetch(`${b!.url}/__sandbox/state`)).text();
      expect(records(fromRedis)).toEqual(records(first));
      expect((await put(onDisk.url, fromRedis)).status).toBe(200);
      const last = await (await fetch(`${onDisk.url}/__sandbox/state`)).text();
      expect(records(last)).toEqual(records(first));
    } finally {
      await Promise.all([memory.close(), onDisk.close()]);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a snapshot saved on A is in Redis: restored on B, both replicas see the state as saved", async () => {
    const [a, b] = await replicas();
    const kept = await authorised(a!);
    const saved = await json(a!, "/__sandbox/snapshots/replica-snap", { method: "PUT", body: "{}" });
    expect(saved.status).toBe(200);
    const later = await authorised(b!);
    // listed from the first and last lines kept beside it in Redis: its count as saved
    expect((await json(b!, "/__sandbox/snapshots")).body.snapshots).toEqual([{ ...(saved.body.snapshot as object), name: "replica-snap", merchant: null }]);
    expect((await json(b!, "/__sandbox/snapshots/replica-snap/restore", { method: "POST", body: '{"all":true}' })).status).toBe(200);
    for (const r of [a!, b!]) {
      const state = await (await fetch(`${r.url}/__sandbox/state`)).text();
      expect(state).toContain(`"transaction_id":"${kept.transaction_id}"`);
      expect(state).not.toContain(`"transaction_id":"${later.transaction_id}"`);
    }
  });

  test("authorise on A, capture on B, refund on A, query on B; ids never collide", async () => {
    const [a, b] = await replicas();
    const p = await authorised(a!);
    expect(JSON.parse((await post(b!, "/v1/capture", { ...ENVELOPE, capture_orders: [p] })).text).capture_orders[0].capture_status).toBe("1");
    const refund = JSON.parse((await post(a!, "/v1/refund", { ...ENVELOPE, refund_orders: [{ ...p, refund_amount: "30.00" }] })).text).refund_orders[0];
    expect(refund.refund_status).toBe("1");
    expect(await statusOf(b!, p.transaction_id)).toBe("4000");
    const search = JSON.parse((await post(b!, "/v1/retrievalRefund", { ...ENVELOPE, transaction_id: p.transaction_id })).text);
    expect(search.refund_orders.map((r: Record<string, string>) => r.refund_reference_id)).toEqual([refund.refund_reference_id]);

    // 40 payments at once, half on each: 40 different ids, each known to the other replica
    const many = await Promise.all(Array.from({ length: 40 }, (_, i) => authorised(i % 2 ? a! : b!, "1.00")));
    expect(new Set(many.map((m) => m.transaction_id)).size).toBe(40);
    const seen = await Promise.all(many.map((m, i) => statusOf(i % 2 ? b! : a!, m.transaction_id)));
    expect(seen.every((s) => s === "2000")).toBe(true);
  });

  test("captures and cancels of one payment racing on both replicas: exactly one wins", async () => {
    const [a, b] = await replicas();
    const p = await authorised(a!, "50.00");
    const calls = Array.from({ length: 40 }, (_, i) => {
      const on = i % 4 < 2 ? a! : b!;
      return i % 2 === 0 ? post(on, "/v1/capture", { ...ENVELOPE, capture_orders: [p] }) : post(on, "/v1/cancel", { ...ENVELOPE, cancel_orders: [p] });
    });
    const results = (await Promise.all(calls)).map((r) => {
      const order = (JSON.parse(r.text).capture_orders ?? JSON.parse(r.text).cancel_orders)[0];
      return order.capture_status ?? order.cancel_status;
    });
    expect(results.filter((s) => s === "1")).toHaveLength(1);
  });

  test("60 refunds of 5.00 racing on both replicas over a 100.00 capture: exactly 20 accepted", async () => {
    const [a, b] = await replicas();
    const p = await authorised(a!);
    await post(b!, "/v1/capture", { ...ENVELOPE, capture_orders: [p] });
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post(i % 2 ? a! : b!, "/v1/refund", {
          ...ENVELOPE,
          refund_orders: [
            { ...p, refund_amount: "5.00" },
            { ...p, refund_amount: "5.00" },
          ],
        }),
      ),
    );
    const accepted = responses.flatMap((r) => JSON.parse(r.text).refund_orders as Record<string, string>[]).filter((r) => r.refund_status === "1");
    expect(accepted).toHaveLength(20);
    expect(new Set(accepted.map((r) => r.refund_reference_id)).size).toBe(20);
    const search = JSON.parse((await post(a!, "/v1/retrievalRefund", { ...ENVELOPE, transaction_id: p.transaction_id })).text);
    const total = search.refund_orders.reduce((sum: number, r: Record<string, string>) => sum + Math.round(Number(r.refund_amount) * 100), 0);
    expect(total).toBe(10_000);
  });

  test("a payout request_id replayed on both replicas at once pays once", async () => {
    const [a, b] = await replicas();
    const body = {
      ...ENVELOPE,
      request_id: crypto.randomUUID(),
      payment_currency: "USD",
      payment_amount: "100.00",
      payment_method: "LOCAL",
      beneficiary: { first_name: "Ann", last_name: "Lee", bank_details: { account_number: "123456789", bank_country_code: "US" } },
    };
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post(i % 2 ? a! : b!, "/v1/payout", body)));
    const ids = new Set(answers.map((r) => JSON.parse(r.text).id ?? JSON.parse(r.text).transaction_id));
    expect(answers.every((r) => r.status === 200)).toBe(true);
    expect(ids.size).toBe(1);
    const listed = await json(b!, `/__sandbox/payouts?request_id=${body.request_id}`);
    expect(listed.body.payouts).toHaveLength(1);
  });

  test("a scenario switch, a binding, a clock advance and a reset made on one replica are in force on the other at once", async () => {
    const [a, b] = await replicas();
    expect((await json(a!, "/__sandbox/scenarios/global", { method: "PUT", body: JSON.stringify({ name: "declines" }) })).status).toBe(200);
    const declined = parseXml((await post(b!, "/v1/authorise", directPayment())).text);
    expect(declined.result_info).not.toBe("0000:Success");
    expect((await json(b!, "/__sandbox/health")).body.scenario).toBe("declines");

    await json(b!, `/__sandbox/scenarios/bindings/${ACME.merchant_id}`, { method: "PUT", body: JSON.stringify({ name: "happy-path" }) });
    expect(parseXml((await post(a!, "/v1/authorise", directPayment())).text).result_info).toBe("0000:Success");

    const before = Date.parse(String((await json(a!, "/__sandbox/health")).body.time));
    const advanced = await json(b!, "/__sandbox/clock", { method: "POST", body: JSON.stringify({ advance: "2d" }) });
    expect(advanced.body.offset_ms).toBe(2 * 86_400_000);
    const after = Date.parse(String((await json(a!, "/__sandbox/health")).body.time));
    expect(after - before).toBeGreaterThanOrEqual(2 * 86_400_000);
    // frozen on A, it stands still on B too; unfrozen on B, it runs on A
    const frozen = await json(a!, "/__sandbox/clock/freeze", { method: "POST", body: "{}" });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await json(b!, "/__sandbox/health")).body.time).toBe(frozen.body.now);
    expect((await json(b!, "/__sandbox/clock/unfreeze", { method: "POST", body: "{}" })).body.frozen).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(Date.parse(String((await json(a!, "/__sandbox/health")).body.time)) - Date.parse(String(frozen.body.now))).toBeGreaterThanOrEqual(1000);

    const p = await authorised(a!);
    expect((await json(b!, "/__sandbox/reset", { method: "POST", body: JSON.stringify({ all: true }) })).status).toBe(200);
    expect((await json(a!, `/__sandbox/transactions?order_no=${p.order_no}`)).body.transactions).toEqual([]); // gone on the other replica too
    const fixtures = (await json(a!, "/__sandbox/transactions")).body.transactions as unknown[];
    expect(fixtures.length).toBeGreaterThan(0);
  });

  test("a scenario saved from the editor on one replica is in force on the other, and a bad one is saved on neither", async () => {
    const [a, b] = await replicas();
    const source =
      "name: shared-short\ndescription: x\nextends: default\nrules:\n  - id: r\n    when: { operation: authorise, card: '4111111111111111' }\n    then: { outcome: insufficient_funds }\n";
    const bad = await json(a!, "/__sandbox/scenarios", {
      method: "POST",
      body: JSON.stringify({ source: source.replace("authorise", "nowhere").replace("shared-short", "shared-bad") }),
    });
    expect(bad.status).toBe(422);
    expect((await json(a!, "/__sandbox/scenarios", { method: "POST", body: JSON.stringify({ source }) })).status).toBe(201);
    expect((await json(b!, "/__sandbox/scenarios/bindings/EDITED-M", { method: "PUT", body: JSON.stringify({ name: "shared-short" }) })).status).toBe(200);
    const paid = parseXml((await post(b!, "/v1/authorise", directPayment({ merchant_id: "EDITED-M", account_id: "A1", card: "4111111111111111" }))).text);
    expect(paid.result_info).toBe("D0051:Insufficient funds");
    for (const r of [a!, b!]) expect((await json(r, "/__sandbox/scenarios/shared-bad")).status).toBe(404);
  });

  test("--merchant-keys random: a merchant provisioned on one replica has the same random key on the other, which accepts its signature", async () => {
    const [a, b] = await replicas(2, undefined, ["--merchant-keys", "random", "--signature-mode", "strict"]);
    const made = await json(a!, "/__sandbox/merchants/TEAM-R", { method: "PUT" });
    expect(made.body).toMatchObject({ created: true, merchant: { merchant_id: "TEAM-R" } });
    const key = (made.body.merchant as { secret_key: string }).secret_key;
    expect(key).toMatch(/^sk_test_[0-9a-f]{32}$/);
    expect((await json(b!, "/__sandbox/merchants/TEAM-R")).body.merchant).toMatchObject({ secret_key: key });
    const body = directPayment({ merchant_id: "TEAM-R", account_id: "A1" });
    const paid = await post(b!, "/v1/authorise", { ...body, encryption_data: signRequest("authorise", body, key) });
    expect(parseXml(paid.text).result_info).toBe("0000:Success");
  });

  test("the request log holds every replica's requests", async () => {
    const [a, b] = await replicas();
    const onA = directPayment();
    const onB = directPayment();
    await post(a!, "/v1/authorise", onA);
    await post(b!, "/v1/authorise", onB);
    for (const replica of [a!, b!]) {
      const log = (await json(replica, "/__sandbox/requests?operation=authorise")).body.requests as { order_no: string; id: string }[];
      const orders = log.map((e) => e.order_no);
      expect(orders).toEqual(expect.arrayContaining([onA.order_no, onB.order_no]));
      expect(new Set(log.map((e) => e.id)).size).toBe(log.length);
    }
  });

  test("a request with large bodies stays in its replica's HAR; the shared log's stream takes its entry only", async () => {
    const prefix = freshPrefix();
    const [a, b] = await Promise.all([
      spawnSandgate([...redisFlags(prefix), "--seed", "replicas"]),
      spawnSandgate([...redisFlags(prefix), "--seed", "replicas"]),
    ]);
    try {
      const large = Array.from({ length: 10 }, () => directPayment({ note: "n".repeat(200_000) }));
      for (const body of large) await post(a!, "/v1/authorise", body);
      const small = directPayment();
      await post(a!, "/v1/authorise", small);
      // what Redis holds for them: no entry over 16 KB and a bit, where each large one was 400 KB
      const client = await redisClient();
      try {
        const stream = await client.xrange(`${prefix}global:{g}:requests`, "-", "+");
        expect(stream.length).toBeGreaterThanOrEqual(11);
        expect(Math.max(...stream.map(([, fields]) => fields[1]!.length))).toBeLessThan(20_000);
      } finally {
        client.disconnect();
      }
      const har = async (r: Replica, order: string) =>
        (await (await fetch(`${r.url}/__sandbox/requests.har?order_no=${order}`)).json()) as {
          log: { entries: { request: { postData?: { text: string } } }[] };
        };
      // the small one's bodies on either replica; the large one's on the replica that served it only
      for (const r of [a!, b!]) expect((await har(r, String(small.order_no))).log.entries[0]!.request.postData?.text).toContain(String(small.order_no));
      expect((await har(a!, String(large[0]!.order_no))).log.entries[0]!.request.postData?.text.length).toBeGreaterThan(200_000);
      const elsewhere = (await har(b!, String(large[0]!.order_no))).log.entries;
      expect(elsewhere).toHaveLength(1);
      expect(elsewhere[0]!.request.postData?.text ?? "").not.toContain("n".repeat(1000));
    } finally {
      for (const r of [a!, b!]) r.child.kill("SIGTERM");
    }
  });

  test("each notification attempt is made by one replica only", async () => {
    const received: string[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => (body += d.toString()));
      req.on("end", () => {
        received.push(String((JSON.parse(body) as { notification_id: string }).notification_id));
        res.end("ok");
      });
    });
    const port = await freePort();
    await new Promise<void>((resolve) => receiver.listen(port, "127.0.0.1", resolve));
    try {
      const [a, b, c] = await replicas(3);
      const notify_url = `http://127.0.0.1:${port}/hook`;
      await Promise.all(Array.from({ length: 12 }, (_, i) => post([a!, b!, c!][i % 3]!, "/v1/authorise", directPayment({ notify_url, account_id: "A10002" }))));
      // every replica's timer and an operator drain on each, all at once
      await Promise.all([a!, b!, c!].map((r) => json(r, "/__sandbox/notifications/deliver", { method: "POST", body: "{}" })));
      type Sent = { notification_id: string; state: string; attempts: unknown[] };
      const outboxOf = async () => (await json(b!, "/__sandbox/notifications")).body.notifications as Sent[];
      await until(async () => (await outboxOf()).every((n) => n.state === "delivered"));
      const outbox = await outboxOf();
      expect(outbox).toHaveLength(12);
      expect(outbox.every((n) => n.state === "delivered" && n.attempts.length === 1)).toBe(true);
      expect(received.sort()).toEqual(outbox.map((n) => n.notification_id).sort());
    } finally {
      receiver.close();
    }
  });
});

describe("a replica that dies while it sends a notification", () => {
  test("leaves the attempt to another once its claim lapses (the attempt's 5 s timeout and the claim's slack, 5 s, shrunk here)", async () => {
    let first = true;
    let firstArrived: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (firstArrived = resolve));
    const answered: string[] = [];
    const receiver: Server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (first) {
          first = false; // never answered: the replica sending it dies meanwhile
          firstArrived();
          return;
        }
        answered.push(String(req.headers["x-sandbox-attempt"]));
        res.end("ok");
      });
    });
    const port = await freePort();
    await new Promise<void>((resolve) => receiver.listen(port, "127.0.0.1", resolve));
    try {
      const args = redisFlags(freshPrefix());
      // A's attempt waits its 5 s for the receiver (B must be started and A killed before that); the claim's slack is shrunk
      const timings = { SANDGATE_TIMINGS: JSON.stringify({ notifyClaimSlackMs: 500 }) };
      const a = await spawnSandgate(args, timings);
      await post(a, "/v1/authorise", directPayment({ notify_url: `http://127.0.0.1:${port}/hook`, account_id: "A10002" }));
      await arrived; // A's timer claimed it and is posting it
      const b = await spawnSandgate(args, timings);
      const claimed = ((await json(b, "/__sandbox/notifications")).body.notifications as { claim?: { until: string } }[])[0]!;
      expect(claimed.claim).toBeDefined();
      a.child.kill("SIGKILL");
      const lapses = Date.parse(claimed.claim!.until);
      let delivered: { state: string; attempts: unknown[] } | undefined;
      await until(async () => {
        const [n] = (await json(b, "/__sandbox/notifications")).body.notifications as { state: string; attempts: unknown[] }[];
        if (n!.state === "delivered") delivered = n;
        return delivered !== undefined;
      });
      expect(Date.now()).toBeGreaterThanOrEqual(lapses); // not before A's claim lapsed
      expect(delivered).toMatchObject({ state: "delivered" });
      expect(delivered!.attempts).toHaveLength(1); // A's attempt was never recorded: it died
      expect(answered).toEqual(["1"]);
    } finally {
      receiver.closeAllConnections();
      receiver.close();
    }
  }, 30_000);
});

describe("--workers", () => {
  test("--workers 2 serves one port from two processes that share the store, and they stop with the primary", async () => {
    const primary = await spawnSandgate(["--workers", "2", ...redisFlags(freshPrefix())]);
    const p = await authorised(primary);
    const captures = await Promise.all([1, 2].map(() => post(primary, "/v1/capture", { ...ENVELOPE, capture_orders: [p] })));
    expect(captures.map((r) => JSON.parse(r.text).capture_orders[0].capture_status).sort()).toEqual(["0", "1"]);
    // request ids carry the answering process's tag: both answered
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        fetch(`${primary.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(directPayment()) }),
      ),
    );
    expect(new Set(answers.map((r) => r.headers.get("x-request-id")!.replace(/-\d+$/, ""))).size).toBe(2);
    const exited = new Promise<number | null>((resolve) => primary.child.once("exit", resolve));
    primary.child.kill("SIGTERM");
    expect(await exited).toBe(0);
    await expect(fetch(`${primary.url}/__sandbox/health`)).rejects.toThrow();
  });

  test("--workers without --redis-url is refused: each process would keep its own state", async () => {
    await expect(spawnSandgate(["--workers", "2"])).rejects.toThrow(/--workers needs --redis-url/);
  });
});

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
  const shortLease = () => vi.stubEnv("SANDGATE_TIMINGS", JSON.stringify({ leaseMs: SHORT_LEASE_MS }));
  afterEach(() => void vi.unstubAllEnvs());

  test("a unit that runs longer than the lease keeps its merchant's turn: another replica waits for it, and its commit is written", async () => {
    shortLease();
    const options = { url: inject("redisUrl"), cluster: inject("redisCluster"), prefix: freshPrefix(), fixturesDir: defaultFixturesDir, seed: "lease" };
    const [one, two] = await Promise.all([openRedisStore(options), openRedisStore(options)]);
    try {
      const order: string[] = [];
      let started!: () => void;
      const holding = new Promise<void>((resolve) => (started = resolve));
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
    shortLease();
    const options = { url: inject("redisUrl"), cluster: inject("redisCluster"), prefix: freshPrefix(), fixturesDir: defaultFixturesDir, seed: "lease" };
    const [one, two] = await Promise.all([openRedisStore(options), openRedisStore(options)]);
    try {
      const order: string[] = [];
      let started!: () => void;
      const holding = new Promise<void>((resolve) => (started = resolve));
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

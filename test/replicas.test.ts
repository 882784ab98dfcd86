// Several Sandgate processes on one Redis behave as one sandbox: what one does, the others see at
// once (settings, state files, snapshots, the request log, keys); races across replicas have one
// winner; each notification attempt is made once, and a dead replica's is taken over; --workers.
// Merchants as partitions: test/replica-partitions.test.ts; failures: test/replica-failures.test.ts.
import { describe, expect, test } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server } from "node:http";
import { ACME, directPayment, parseXml, signRequest } from "./helpers.js";
import { freshPrefix, redisClient, redisFlags, spawnSandgate, type Replica } from "./replica-helpers.js";
import { ENVELOPE, authorised, json, post, replicas, statusOf } from "./replica-requests.js";
import { until } from "./waiting.js";
import { startSandbox } from "../src/server/sandbox.js";
import { freePort } from "../scripts/redis-server.js";

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

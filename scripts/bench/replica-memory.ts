// `npm run bench:replica-memory [-- --payments 1000000 --merchants 1000 | --quick]` (issue 26,
// "Bounded replicas"): with many payments across many merchants in Redis, does one Sandgate replica's
// memory stay bounded? The claim measured: "With 1,000,000 payments across 1,000 merchants in Redis,
// each replica's RSS stays ≤ 300 MB" (a replica holds at most HELD_RECORDS records, dropping the
// merchants it served least recently; docs/replicas.md, "Memory"). --quick: 100,000 across 100.
//
// How, every server in its own process:
//   1. a Redis (scripts/redis-server.ts: its own folder, append-only file on);
//   2. one Sandgate on it makes one real direct payment for BM0001; the transaction and merchant
//      records it stored are read straight from Redis as templates, with the settings' generation;
//      that Sandgate stops;
//   3. Redis is filled directly from this process (ioredis pipelines): N merchants BM0001…, each
//      with payments/merchants payments made from the template (unique transaction_id and order_no),
//      written exactly as the store's SEED script writes a seeded merchant (records hash, order
//      sorted set, seq, counters, epoch "<generation>/bench", version 0), plus the global merchants
//      set and a `where` entry per payment;
//   4. a fresh Sandgate replica on that prefix, its RSS (/proc VmRSS) sampled every 100 ms throughout:
//      20 concurrent loops make, for every merchant, one new direct payment (its first request loads
//      the merchant from Redis) and one retrievalTrans by the transaction_id of one of its stored
//      payments, which must find it (the loaded data is right); then a second pass over every
//      merchant, payments only (by then most merchants were dropped again, so most are loaded again);
//   5. everything is stopped.
// Printed: the fill's time and Redis's used_memory, then the replica's RSS at start, its maximum,
// at the end of each pass, each pass's wall time, requests/s, latencies and failures (must be 0).
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { HELD_RECORDS } from "../../src/store/redis/held-merchants.js";
import { COLLECTIONS, globalKeys, partitionKeys } from "../../src/store/redis/redis-scripts.js";
import { startRedis, type TestRedis } from "../redis-server.js";
import { startSandgate, type Service } from "./processes.js";

const { values: opts } = parseArgs({
  options: {
    payments: { type: "string" },
    merchants: { type: "string" },
    quick: { type: "boolean", default: false },
  },
});
const PAYMENTS = Number(opts.payments ?? (opts.quick ? 100_000 : 1_000_000));
const MERCHANTS = Number(opts.merchants ?? (opts.quick ? 100 : 1_000));
if (!(Number.isInteger(PAYMENTS) && Number.isInteger(MERCHANTS) && MERCHANTS > 0 && PAYMENTS >= MERCHANTS))
  throw new Error("--payments and --merchants: integers, payments ≥ merchants > 0");
const CONCURRENCY = 20;
const SAMPLE_MS = 100;
const BOUND_MB = 300;
const PIPELINE_COMMANDS = 2_000;
/** a pipeline is also sent once it holds this many bytes of values (records are ~1–2 KB each) */
const PIPELINE_BYTES = 8 << 20;
/** records per HSET / ZADD command */
const PER_COMMAND = 100;
const PREFIX = `rm-${process.pid}:`;
const SIG = "a".repeat(64);
const JSON_TYPE = "application/json";
const TEMPLATE_MERCHANT = "BM0001";

const merchantId = (i: number) => `BM${String(i + 1).padStart(4, "0")}`;
/** payments of merchant i: an even share, the first ones one more when it does not divide */
const paymentsOf = (i: number) => Math.floor(PAYMENTS / MERCHANTS) + (i < PAYMENTS % MERCHANTS ? 1 : 0);
/** the first payment number of merchant i (payments are numbered 0… across every merchant) */
const firstPaymentOf = (i: number) => i * Math.floor(PAYMENTS / MERCHANTS) + Math.min(i, PAYMENTS % MERCHANTS);
/** 16 digits, never one a Sandgate makes by chance in practice: "8" + the payment number */
const transactionId = (n: number) => `8${String(n).padStart(15, "0")}`;
const orderNo = (m: string, j: number) => `RM-${m}-${j}`;
/** the stored payment merchant i's retrievalTrans asks for: one spread over its payments */
const probeOf = (i: number) => (i * 7919) % paymentsOf(i);

const log = (line: string) => console.log(`replica-memory: ${line}`);
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
const sec = (ms: number) => (ms / 1000).toFixed(1);

const payment = (merchant_id: string, order_no: string) =>
  JSON.stringify({
    merchant_id,
    account_id: "A1",
    order_no,
    currency: "USD",
    amount: "10.00",
    card: "4242424242424242",
    expiration_month: "12",
    expiration_year: "2030",
    security_code: "123",
    encryption_data: SIG,
  });
const approved = (xml: string) => xml.includes("<order_status>1</order_status>");

async function post(url: string, path: string, body: string): Promise<{ status: number; text: string; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": JSON_TYPE }, body });
  const text = await res.text();
  return { status: res.status, text, ms: performance.now() - t0 };
}

const percentile = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const latencies = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;

// ---- 2. the templates ---------------------------------------------------------------------------

interface Templates {
  transaction: Record<string, unknown>;
  merchant: Record<string, unknown>;
  generation: string;
  /** every key the payment left under the prefix, for the log */
  keys: string[];
}

async function templates(redis: TestRedis, client: Redis): Promise<Templates> {
  const sandgate = await startSandgate(["--redis-url", redis.url, "--redis-prefix", PREFIX]);
  try {
    const r = await post(sandgate.url, "/v1/authorise", payment(TEMPLATE_MERCHANT, "TEMPLATE-1"));
    if (r.status !== 200 || !approved(r.text)) throw new Error(`template payment not approved (${r.status}): ${r.text.slice(0, 400)}`);
  } finally {
    await sandgate.stop();
  }
  const p = partitionKeys(PREFIX, TEMPLATE_MERCHANT, false);
  const at = (c: string) => p.records[COLLECTIONS.indexOf(c as never)]!;
  const [transactions, merchants, generation] = await Promise.all([
    client.hgetall(at("transactions")),
    client.hgetall(at("merchants")),
    client.hget(globalKeys(PREFIX).settings, "gen"),
  ]);
  const txs = Object.values(transactions);
  const ms = Object.values(merchants);
  if (txs.length !== 1 || ms.length !== 1 || !generation)
    throw new Error(`expected 1 transaction, 1 merchant and a generation in Redis; found ${txs.length}, ${ms.length}, ${generation}`);
  const keys: string[] = [];
  for (let cursor = "0"; ;) {
    const [next, found] = await client.scan(cursor, "MATCH", `${PREFIX}*`, "COUNT", 1000);
    keys.push(...found);
    if ((cursor = next) === "0") break;
  }
  return {
    transaction: JSON.parse(txs[0]!) as Record<string, unknown>,
    merchant: JSON.parse(ms[0]!) as Record<string, unknown>,
    generation,
    keys: keys.sort(),
  };
}

// ---- 3. the fill --------------------------------------------------------------------------------

/**
 * The template's JSON text cut where its transaction_id, order_no and merchant_id go (wherever the
 * template's values occur), so a record is a few string concatenations.
 */
function recordMaker(tx: Record<string, unknown>): (id: string, order: string, merchant: string) => string {
  const originals = { id: String(tx.transaction_id), order: String(tx.order_no), merchant: String(tx.merchant_id) };
  const text = JSON.stringify({ ...tx, account_id: "A1" });
  const tokens = new Map([
    [JSON.stringify(originals.id), "id"],
    [JSON.stringify(originals.order), "order"],
    [JSON.stringify(originals.merchant), "merchant"],
  ] as const);
  // whole JSON string values only ("…"), so a merchant id inside another value is left alone
  const re = new RegExp([...tokens.keys()].map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
  const parts: (string | "id" | "order" | "merchant")[] = [];
  let last = 0;
  for (const m of text.matchAll(re)) {
    parts.push(text.slice(last, m.index), tokens.get(m[0] as never)!);
    last = m.index + m[0].length;
  }
  parts.push(text.slice(last));
  const literal = parts.map((p, i) => (i % 2 === 0 ? p : ""));
  const slots = parts.map((p, i) => (i % 2 === 1 ? (p as "id" | "order" | "merchant") : undefined));
  return (id, order, merchant) => {
    let out = "";
    for (let i = 0; i < parts.length; i++) {
      const s = slots[i];
      out += s === undefined ? literal[i] : JSON.stringify(s === "id" ? id : s === "order" ? order : merchant);
    }
    return out;
  };
}

async function fill(client: Redis, t: Templates): Promise<void> {
  const started = performance.now();
  const global = globalKeys(PREFIX);
  const makeRecord = recordMaker(t.transaction);
  const check = JSON.parse(makeRecord("8000000000000000", "O", "M")) as Record<string, unknown>;
  if (check.transaction_id !== "8000000000000000" || check.order_no !== "O" || check.merchant_id !== "M")
    throw new Error("the transaction template did not take its new values");
  if (typeof t.transaction.page_id === "string" && t.transaction.page_id !== "")
    log(`note: the template payment has a page_id (${t.transaction.page_id}); the copies share it and it is not indexed in where`);

  // what the template payment left behind goes, so every merchant starts as the fill writes it
  const leftovers = t.keys.filter((k) => k.startsWith(`${PREFIX}m:`) || k === global.merchants || k === global.where || k === global.due);
  if (leftovers.length) await client.del(...leftovers);

  let pipeline = client.pipeline();
  let commands = 0;
  let bytes = 0;
  const inFlight: Promise<unknown>[] = [];
  const send = async () => {
    if (!commands) return;
    const sent = pipeline.exec().then((results) => {
      const failed = results?.find(([err]) => err);
      if (failed) throw failed[0]!;
    });
    pipeline = client.pipeline();
    commands = 0;
    bytes = 0;
    inFlight.push(sent);
    // two pipelines in flight at most: this process builds the next while Redis takes one
    if (inFlight.length >= 2) await inFlight.shift();
  };
  const added = async (n: number, size: number) => {
    commands += n;
    bytes += size;
    if (commands >= PIPELINE_COMMANDS || bytes >= PIPELINE_BYTES) await send();
  };

  let lastLog = performance.now();
  for (let i = 0; i < MERCHANTS; i++) {
    const m = merchantId(i);
    const p = partitionKeys(PREFIX, m, false);
    const records = (c: string) => p.records[COLLECTIONS.indexOf(c as never)]!;
    const order = (c: string) => p.order[COLLECTIONS.indexOf(c as never)]!;
    const n = paymentsOf(i);
    const first = firstPaymentOf(i);
    // as SEED writes it: records in collection order (merchants, then transactions), each given the next seq
    const merchant = JSON.stringify({ ...t.merchant, merchant_id: m });
    pipeline.hset(records("merchants"), m, merchant).zadd(order("merchants"), 1, m);
    await added(2, merchant.length);
    for (let at = 0; at < n; at += PER_COMMAND) {
      const fields: string[] = [];
      const scores: (string | number)[] = [];
      const where: string[] = [];
      let size = 0;
      for (let j = at; j < Math.min(n, at + PER_COMMAND); j++) {
        const id = transactionId(first + j);
        const json = makeRecord(id, orderNo(m, j), m);
        fields.push(id, json);
        scores.push(j + 2, id);
        where.push(`transaction:${id}`, m);
        size += json.length + 64;
      }
      pipeline
        .hset(records("transactions"), ...fields)
        .zadd(order("transactions"), ...scores)
        .hset(global.where, ...where);
      await added(3, size);
    }
    pipeline
      .set(p.seq, n + 1)
      .set(p.counters, "{}")
      .set(p.epoch, `${t.generation}/bench`)
      .set(p.version, 0)
      .sadd(global.merchants, m);
    await added(5, 0);
    if (performance.now() - lastLog > 5_000 || i === MERCHANTS - 1) {
      lastLog = performance.now();
      log(`fill: ${i + 1}/${MERCHANTS} merchants, ${first + n} payments, ${sec(performance.now() - started)} s`);
    }
  }
  await send();
  await Promise.all(inFlight);
  const took = performance.now() - started;
  const info = await client.info("memory");
  const used = Number(/^used_memory:(\d+)/m.exec(info)?.[1]);
  const [merchantsSet, whereLen] = await Promise.all([client.scard(global.merchants), client.hlen(global.where)]);
  log(
    `fill done: ${PAYMENTS} payments across ${MERCHANTS} merchants in ${sec(took)} s (${Math.round(PAYMENTS / (took / 1000))} payments/s); Redis used_memory ${mb(used)} MB; merchants set ${merchantsSet}, where ${whereLen} entries`,
  );
}

// ---- 4. the replica -----------------------------------------------------------------------------

interface Pass {
  name: string;
  ms: number;
  requests: number;
  failures: number;
  /** RSS when the pass ended, MB */
  rssEnd: number;
  /** the highest RSS sampled during the pass, MB */
  rssMax: number;
  latency: { payment: number[]; retrieval: number[] };
}

/** Samples the replica's RSS every SAMPLE_MS until stopped: the maximum so far, and since a mark. */
function sampler(s: Service) {
  let max = 0;
  let sinceMark = 0;
  const timeline: [number, number][] = [];
  const t0 = performance.now();
  const take = () => {
    const rss = s.rssMb();
    if (!Number.isFinite(rss)) return;
    max = Math.max(max, rss);
    sinceMark = Math.max(sinceMark, rss);
    timeline.push([performance.now() - t0, rss]);
  };
  take();
  const timer = setInterval(take, SAMPLE_MS);
  return {
    max: () => max,
    /** the maximum since the last mark, and a new mark */
    mark() {
      take();
      const m = sinceMark;
      sinceMark = 0;
      return m;
    },
    timeline,
    stop: () => clearInterval(timer),
  };
}

const failures: string[] = [];
function failed(what: string): void {
  if (failures.length < 10) failures.push(what);
}

async function pass(s: Service, rss: ReturnType<typeof sampler>, name: string, withRetrieval: boolean, round: number): Promise<Pass> {
  const result: Pass = { name, ms: 0, requests: 0, failures: 0, rssEnd: 0, rssMax: 0, latency: { payment: [], retrieval: [] } };
  let next = 0;
  let done = 0;
  const started = performance.now();
  let lastLog = started;
  const loop = async () => {
    for (let i = next++; i < MERCHANTS; i = next++) {
      const m = merchantId(i);
      try {
        const r = await post(s.url, "/v1/authorise", payment(m, `RM-NEW-${round}-${m}`));
        result.requests++;
        result.latency.payment.push(r.ms);
        if (r.status !== 200 || !approved(r.text)) {
          result.failures++;
          failed(`${name}: payment of ${m}: ${r.status} ${r.text.slice(0, 300)}`);
        }
      } catch (err) {
        result.failures++;
        failed(`${name}: payment of ${m}: ${(err as Error).message}`);
      }
      if (withRetrieval) {
        const j = probeOf(i);
        const id = transactionId(firstPaymentOf(i) + j);
        try {
          const r = await post(s.url, "/v1/retrievalTrans", JSON.stringify({ merchant_id: m, account_id: "A1", encryption_data: SIG, transaction_id: id }));
          result.requests++;
          result.latency.retrieval.push(r.ms);
          const list = r.status === 200 ? ((JSON.parse(r.text) as { orders_list?: { transaction_id: string; order_no: string }[] }).orders_list ?? []) : [];
          if (list.length !== 1 || list[0]!.transaction_id !== id || list[0]!.order_no !== orderNo(m, j)) {
            result.failures++;
            failed(`${name}: retrievalTrans of ${m} ${id}: ${r.status} ${r.text.slice(0, 300)}`);
          }
        } catch (err) {
          result.failures++;
          failed(`${name}: retrievalTrans of ${m} ${id}: ${(err as Error).message}`);
        }
      }
      done++;
      if (performance.now() - lastLog > 10_000) {
        lastLog = performance.now();
        log(`${name}: ${done}/${MERCHANTS} merchants, ${sec(performance.now() - started)} s, RSS now ${s.rssMb()} MB, max ${rss.max()} MB`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  result.ms = performance.now() - started;
  result.rssEnd = s.rssMb();
  result.rssMax = rss.mark();
  return result;
}

// ---- the run ------------------------------------------------------------------------------------

async function main(): Promise<void> {
  log(
    `${PAYMENTS} payments across ${MERCHANTS} merchants (${Math.floor(PAYMENTS / MERCHANTS)} each), prefix ${PREFIX}, HELD_RECORDS ${HELD_RECORDS}, ${CONCURRENCY} concurrent loops`,
  );
  const redis = await startRedis();
  const client = new Redis(redis.url, { lazyConnect: true });
  let replica: Service | undefined;
  try {
    await client.connect();
    const t = await templates(redis, client);
    log(
      `templates: transaction ${JSON.stringify(t.transaction).length} B of JSON, merchant ${JSON.stringify(t.merchant).length} B, generation ${t.generation}; keys the payment left: ${t.keys.map((k) => k.slice(PREFIX.length)).join(", ")}`,
    );
    await fill(client, t);

    replica = await startSandgate(["--redis-url", redis.url, "--redis-prefix", PREFIX]);
    const rss = sampler(replica);
    const rssStart = replica.rssMb();
    log(`replica started (pid ${replica.pid}): RSS ${rssStart} MB`);
    const passes = [await pass(replica, rss, "pass 1 (payment + retrievalTrans)", true, 1)];
    log(`pass 1 done: RSS ${passes[0]!.rssEnd} MB, max ${passes[0]!.rssMax} MB`);
    passes.push(await pass(replica, rss, "pass 2 (payment)", false, 2));
    const rssEnd = replica.rssMb();
    rss.stop();
    const max = rss.max();

    // RSS over time, in tenths of the run: the highest sample of each
    const last = rss.timeline.at(-1)![0];
    const tenths = Array.from({ length: 10 }, (_, k) =>
      Math.max(...rss.timeline.filter(([at]) => at >= (k * last) / 10 && at <= ((k + 1) * last) / 10).map(([, v]) => v)),
    );
    const failuresTotal = passes.reduce((n, p) => n + p.failures, 0);
    const out = [
      ``,
      `Bounded replicas (issue 26): ${PAYMENTS} payments across ${MERCHANTS} merchants in Redis, one replica, ${CONCURRENCY} concurrent loops`,
      `  replica RSS: start ${rssStart} MB, max ${max} MB, end ${rssEnd} MB (sampled every ${SAMPLE_MS} ms, ${rss.timeline.length} samples; bound ${BOUND_MB} MB: ${max <= BOUND_MB ? "kept" : "EXCEEDED"})`,
      `  RSS max by tenth of the run (MB): ${tenths.join(" ")}`,
      ...passes.flatMap((p) => [
        `  ${p.name}: ${MERCHANTS} merchants, ${p.requests} requests in ${sec(p.ms)} s, ${Math.round(p.requests / (p.ms / 1000))} req/s, failures ${p.failures}; RSS max ${p.rssMax} MB, at end ${p.rssEnd} MB`,
        `    payment latency: ${latencies(p.latency.payment)}${p.latency.retrieval.length ? `; retrievalTrans latency: ${latencies(p.latency.retrieval)}` : ""}`,
      ]),
      `  failures: ${failuresTotal}${failuresTotal ? ` (must be 0)\n    ${failures.join("\n    ")}` : ""}`,
    ];
    console.log(out.join("\n"));
    if (failuresTotal) process.exitCode = 1;
  } finally {
    await replica?.stop();
    client.disconnect();
    await redis.close();
  }
}

await main();

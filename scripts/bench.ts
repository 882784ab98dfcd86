// `npm run bench [-- --duration 5 --connections 10]`: load on the main operations of an in-process
// Sandgate (autocannon). Each case warms up, then is measured for --duration seconds. Machines are
// noisy, so every rate is also given as a ratio to GET /__sandbox/health measured first in the same
// run, and health is measured again last to show how far the machine drifted meanwhile.
// The table goes to stdout, the numbers to bench-results.json.
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { startSandbox, type Sandbox } from "../src/sandbox.js";

const SIG = "a".repeat(64); // lenient signature mode accepts any 64 hex characters
const ACME = { merchant_id: "M10001", account_id: "A10001" };
const CARD = { card: "4242424242424242", expiration_month: "12", expiration_year: "2030", security_code: "123" };
const CAPTURE_POOL = 2000; // payments captured once each, cycling; later captures are refused
const CAPTURE_WARMUP_POOL = 200; // the warm-up captures its own payments, so the measured run starts on fresh ones
const REFUND_POOL = 200; // captured 100.00 payments taking 0.01 refunds in turn (the gateway allows 99 per payment)
const BATCH_LIMIT = 50; // orders per capture request
const JSON_TYPE = "application/json";
const FORM_TYPE = "application/x-www-form-urlencoded";

type Body = () => string;
interface Order {
  transaction_id: string;
  order_no: string;
  currency: string;
  amount: string;
}
interface Case {
  name: string;
  method: "GET" | "POST";
  path: string;
  type?: string;
  /** runs against a sandbox with --data (a temp file) instead of memory state */
  persisted?: boolean;
  /** the gateway's own status field in the answer, counted per value as the outcome mix */
  outcome?: string;
  /** creates what the case needs; the bodies of the warm-up and of the measured requests */
  prepare?: (url: string) => Promise<{ warmup: Body; measure: Body }>;
}
interface Row {
  case: string;
  requests: number;
  requests_per_second: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
  ratio_to_health: number;
  http_statuses: Record<string, number>;
  /** how often each value of the case's status field came back, e.g. { field: "capture_status", counts: { "1": 2000, "0": 950 } } */
  outcomes?: { field: string; counts: Record<string, number> };
  data_file_bytes?: number;
}

let sequence = 0;
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)}s elapsed`;
const payment = (prefix: string, amount = "10.00") =>
  JSON.stringify({ ...ACME, order_no: `${prefix}-${++sequence}`, currency: "USD", amount, ...CARD, encryption_data: SIG });
const batch = (field: string, orders: object[]) => JSON.stringify({ ...ACME, encryption_data: SIG, [field]: orders });
const identity = (o: Order) => ({ transaction_id: o.transaction_id, order_no: o.order_no, currency: o.currency, amount: o.amount });
const same = (body: Body) => ({ warmup: body, measure: body });

function cycle<T>(items: T[], make: (item: T) => string): Body {
  let i = 0;
  return () => make(items[i++ % items.length]!);
}

async function post(url: string, type: string, body: string): Promise<string> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": type }, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`bench setup: ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return text;
}

/** Approved, authorised (manual capture) payments made through the API, 50 at a time. */
async function createPayments(url: string, prefix: string, count: number, amount = "10.00"): Promise<Order[]> {
  const orders: Order[] = [];
  while (orders.length < count) {
    const bodies = Array.from({ length: Math.min(50, count - orders.length) }, () => payment(prefix, amount));
    const answers = await Promise.all(bodies.map((b) => post(`${url}/v1/authorise`, JSON_TYPE, b)));
    answers.forEach((xml, i) => {
      const id = /<transaction_id>(\d+)<\/transaction_id>/.exec(xml)?.[1];
      if (!id) throw new Error(`bench setup: no transaction_id in ${xml.slice(0, 300)}`);
      const sent = JSON.parse(bodies[i]!) as { order_no: string };
      orders.push({ transaction_id: id, order_no: sent.order_no, currency: "USD", amount });
    });
  }
  return orders;
}

const HEALTH = { method: "GET", path: "/__sandbox/health" } as const;

const CASES: Case[] = [
  { name: "health (baseline)", ...HEALTH },
  {
    name: "authorise",
    method: "POST",
    path: "/v1/authorise",
    type: JSON_TYPE,
    outcome: "order_status",
    prepare: async () => same(() => payment("BENCH-A")),
  },
  {
    name: "retrievalTrans",
    method: "POST",
    path: "/v1/retrievalTrans",
    type: FORM_TYPE,
    outcome: "query_result",
    prepare: async (url) => {
      const orders = await createPayments(url, "BENCH-Q", 200);
      return same(cycle(orders, (o) => new URLSearchParams({ ...ACME, order_no: o.order_no, encryption_data: SIG }).toString()));
    },
  },
  {
    name: "capture",
    method: "POST",
    path: "/v1/capture",
    type: JSON_TYPE,
    outcome: "capture_status",
    prepare: async (url) => {
      const warm = await createPayments(url, "BENCH-CW", CAPTURE_WARMUP_POOL);
      const pool = await createPayments(url, "BENCH-C", CAPTURE_POOL);
      const capture = (o: Order) => batch("capture_orders", [identity(o)]);
      return { warmup: cycle(warm, capture), measure: cycle(pool, capture) };
    },
  },
  {
    name: "refund 0.01",
    method: "POST",
    path: "/v1/refund",
    type: JSON_TYPE,
    outcome: "refund_status",
    prepare: async (url) => {
      const paid = await createPayments(url, "BENCH-R", REFUND_POOL, "100.00");
      for (let i = 0; i < paid.length; i += BATCH_LIMIT) {
        const chunk = paid.slice(i, i + BATCH_LIMIT);
        const answer = await post(`${url}/v1/capture`, JSON_TYPE, batch("capture_orders", chunk.map(identity)));
        if ((answer.match(/"capture_status":"1"/g) ?? []).length !== chunk.length) throw new Error(`bench setup: capture failed: ${answer.slice(0, 300)}`);
      }
      return same(cycle(paid, (o) => batch("refund_orders", [{ ...identity(o), refund_amount: "0.01", refund_reason: "bench" }])));
    },
  },
  {
    name: "authorise --data",
    method: "POST",
    path: "/v1/authorise",
    type: JSON_TYPE,
    persisted: true,
    outcome: "order_status",
    prepare: async () => same(() => payment("BENCH-D")),
  },
  // the same baseline again: how far it drifted during the run tells how far to trust the ratios
  { name: "health (drift check)", ...HEALTH },
];

function load(url: string, c: Case, body: Body | undefined, seconds: number, connections: number, outcomes?: Record<string, number>) {
  const status = c.outcome && new RegExp(`"${c.outcome}":"(-?\\d+)"|<${c.outcome}>(-?\\d+)</${c.outcome}>`);
  return autocannon({
    url: url + c.path,
    method: c.method,
    connections,
    duration: seconds,
    headers: c.type ? { "content-type": c.type } : {},
    requests: [
      {
        ...(body && { setupRequest: (req: autocannon.Request) => ({ ...req, body: body() }) }),
        ...(outcomes &&
          status && {
            onResponse: (_code: number, text: string) => {
              const m = status.exec(text);
              const key = m?.[1] ?? m?.[2] ?? "absent";
              outcomes[key] = (outcomes[key] ?? 0) + 1;
            },
          }),
      },
    ],
  });
}

async function measure(sandbox: Sandbox, c: Case, options: Options): Promise<Omit<Row, "ratio_to_health">> {
  const bodies = c.prepare ? await c.prepare(sandbox.url) : undefined;
  process.stderr.write(`${c.name}: warming up ${options.warmup}s, measuring ${options.duration}s (${elapsed()})\n`);
  await load(sandbox.url, c, bodies?.warmup, options.warmup, options.connections);
  const outcomes: Record<string, number> = {};
  const r = await load(sandbox.url, c, bodies?.measure, options.duration, options.connections, c.outcome ? outcomes : undefined);
  const statuses = Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0] as const);
  return {
    case: c.name,
    requests: r.requests.total,
    requests_per_second: Math.round(r.requests.total / r.duration),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    non_2xx: r.non2xx,
    errors: r.errors,
    http_statuses: Object.fromEntries(statuses),
    ...(c.outcome && { outcomes: { field: c.outcome, counts: outcomes } }),
  };
}

interface Options {
  duration: number;
  warmup: number;
  connections: number;
}

function readOptions(): Options {
  const { values } = parseArgs({ options: { duration: { type: "string", default: "5" }, connections: { type: "string", default: "10" } } });
  const duration = Number(values.duration);
  const connections = Number(values.connections);
  if (!(duration > 0)) throw new Error(`--duration must be a positive number of seconds, not ${values.duration}`);
  if (!Number.isInteger(connections) || connections < 1) throw new Error(`--connections must be a positive whole number, not ${values.connections}`);
  return { duration, connections, warmup: Math.max(1, Math.round(duration / 5)) };
}

const mix = (counts: Record<string, number>) =>
  Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k}×${n}`)
    .join(" ");

function table(rows: Row[]): string {
  const head = ["case", "req/s", "p50 ms", "p99 ms", "non-2xx + errors", "× health", "HTTP statuses", "outcomes"];
  const cells = rows.map((r) => [
    r.case,
    String(r.requests_per_second),
    String(r.p50_ms),
    String(r.p99_ms),
    String(r.non_2xx + r.errors),
    r.ratio_to_health.toFixed(2),
    mix(r.http_statuses),
    r.outcomes ? `${r.outcomes.field} ${mix(r.outcomes.counts)}` : "",
  ]);
  const line = (c: string[]) => `| ${c.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...cells.map(line)].join("\n");
}

async function main(): Promise<void> {
  const options = readOptions();
  const base = { port: 0, host: "127.0.0.1", logLevel: "silent", seed: "bench" } as const;
  const rows: Row[] = [];
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-"));
  const memory = await startSandbox(base);
  try {
    for (const c of CASES) {
      // every case starts from the fixtures, so one case's records do not slow the next
      await post(`${memory.url}/__sandbox/reset`, JSON_TYPE, "{}");
      const data = join(dir, "state.json");
      const sandbox = c.persisted ? await startSandbox({ ...base, data }) : memory;
      try {
        // the process itself is cold at first (JIT, http parser): the first case warms up longer
        const row = await measure(sandbox, c, rows.length === 0 ? { ...options, warmup: options.warmup * 3 } : options);
        const baseline = rows[0]?.requests_per_second ?? row.requests_per_second;
        rows.push({ ...row, ratio_to_health: Math.round((row.requests_per_second / baseline) * 100) / 100, ...(c.persisted && { data_file_bytes: statSync(data).size }) });
      } finally {
        if (sandbox !== memory) await sandbox.close();
      }
    }
  } finally {
    await memory.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const out = resolve(import.meta.dirname, "..", "bench-results.json");
  const run = { measured_at: new Date().toISOString(), node: process.version, cpus: availableParallelism(), ...options, cases: rows };
  writeFileSync(out, `${JSON.stringify(run, null, 2)}\n`);
  process.stdout.write(`${table(rows)}\n\n${options.connections} connections, ${options.duration}s per case after ${options.warmup}s warm-up (${options.warmup * 3}s for the first); wrote ${out}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});

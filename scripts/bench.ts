// `npm run bench [-- --reps 3 --connections 10 --large 100000 --quick --pin --base <checkout>]`
// Sandgate as users run it (node dist/sandgate.js, its own process) against a floor: a plain Express 5
// app (scripts/bench/floor.mjs, its own process too) answering canned bodies of the same sizes, and
// beneath it Node's own HTTP server doing the same (scripts/bench/floor-http.mjs: the physical limit).
// Workloads W1-W5 (scripts/bench/workloads.ts) do fresh, valid work; each rep runs every workload
// on Sandgate (reset to the fixtures first), on Sandgate with --data, and on the floor,
// interleaved; the figures are medians over the reps, and every ratio ("× floor", "--data ×
// memory", ...) is the median of each rep's own ratio (two runs a minute apart at most), so a noisy
// machine moves both sides. --large N loads N payments through the API into two more Sandgates
// (memory and --data), lets them settle, and runs each workload on them too, in the same reps,
// right after the fresh ones (without resetting them). Also: cold start (spawn → first answer of /v1/authorise) and
// idle RSS of both; `sandgate verify` on a recording of 1,000 exchanges (scripts/bench/verify.ts);
// replicas on Redis, the store partitioned by merchant (scripts/bench/replicas.ts); then every speed
// the docs promise, each a named scenario with its figure and whether it holds (scripts/bench/promises.ts;
// --no-promises leaves them out, `npm run bench:promises` runs only them).
// Tables on stdout, numbers in bench-results.json.
// --pin runs the servers on one CPU and the load generator on the other(s) (see pin()).
// --base <checkout>: another build (its dist/sandgate.js, built there with `npm run build`) measured
// beside this one in every rep, the two back to back in an order that alternates; the table adds
// its CPU per request and req/s, and this build's ratio to it (paired medians).
// Besides req/s, each run reads the server's CPU time (/proc/<pid>/task/*/schedstat, all threads,
// GC included) per request: on a 2-core machine where the load generator takes a core, CPU per
// request is the steadier comparison with the floor.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { coldStart, floorArgs, pin, ROOT, sandgateArgs, startFloor, startHttpFloor, startSandgate, type Service } from "./bench/processes.js";
import { HAS_REDIS, startRedis } from "./redis-server.js";
import { loadPayments, median, requestsFor, run, type Run } from "./bench/run.js";
import { SIG, WORKLOADS, type Workload } from "./bench/workloads.js";
import { benchVerify, verifyTable } from "./bench/verify.js";
import { benchReplicas, replicasTable } from "./bench/replicas.js";
import { benchCtl } from "./bench/ctl-start.js";
import { benchPromises, promisesTable } from "./bench/promises.js";

interface Options {
  reps: number;
  connections: number;
  large: number;
  /** a tenth of the requests per run: a quick look, not figures to quote */
  scale: number;
  /** servers on one CPU, the load generator on the other(s) */
  pin: boolean;
  /** another build's bundle, measured beside this one (--base <checkout>) */
  base: string | undefined;
  /** the speed promises' scenarios after the workloads (--no-promises leaves them out) */
  promises: boolean;
}

/**
 * Idle time after loading --large payments, before measuring (see where it is used). It was for V8's
 * memory reducer, which started its collections ~30 s after the load's last full one; Sandgate now
 * runs with it off (NODE_FLAGS), and the wait shows that idling changes nothing.
 */
const SETTLE_MS = 60_000;

/** the workloads also measured on --workers 2 with Redis */
const SHARED_WORKLOADS = ["W1", "W3"];

const log = (text: string) => process.stderr.write(`${text}\n`);

const reset = (s: Service) =>
  fetch(`${s.url}/__sandbox/reset`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ all: true }) }).then((r) =>
    r.text(),
  );

/** One workload on a Sandgate: fresh state unless `keepState`, its work prepared, then measured. */
async function onSandgate(s: Service, w: Workload, o: Options, keepState = false): Promise<Run> {
  if (!keepState) await reset(s);
  const requests = requestsFor(w, o);
  return run(s, w, await w.prepare(s.url, requests), requests, o.connections, false);
}

async function onFloor(f: Service, w: Workload, o: Options): Promise<Run> {
  const requests = requestsFor(w, o);
  return run(f, w, await w.prepare(undefined, requests), requests, o.connections, true);
}

type Results = Record<string, Record<string, Run[]>>;
const keep = (results: Results, where: string, w: Workload, r: Run) => ((results[where] ??= {})[w.id] ??= []).push(r);

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      reps: { type: "string", default: "3" },
      connections: { type: "string", default: "10" },
      large: { type: "string", default: "0" },
      quick: { type: "boolean", default: false },
      pin: { type: "boolean", default: false },
      base: { type: "string" },
      "no-promises": { type: "boolean", default: false },
    },
  });
  const options = {
    reps: Number(values.reps),
    connections: Number(values.connections),
    large: Number(values.large),
    scale: values.quick ? 0.1 : 1,
    pin: values.pin,
    base: values.base === undefined ? undefined : resolve(values.base, "dist", "sandgate.js"),
    promises: !values["no-promises"],
  };
  if (options.base !== undefined && !existsSync(options.base)) throw new Error(`--base: no ${options.base} (run npm run build in that checkout)`);
  if (!Number.isInteger(options.reps) || options.reps < 1) throw new Error(`--reps must be a whole number ≥ 1, not ${values.reps}`);
  if (!Number.isInteger(options.connections) || options.connections < 1) throw new Error(`--connections must be a whole number ≥ 1, not ${values.connections}`);
  if (!Number.isInteger(options.large) || options.large < 0) throw new Error(`--large must be a number of payments, not ${values.large}`);
  return options;
}

const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "—");
const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
const tableOf = (head: string[], rows: string[][]) => [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");

async function main(): Promise<void> {
  const o = readOptions();
  if (o.pin) pin();
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-"));
  const probe = {
    path: "/v1/authorise",
    body: JSON.stringify({
      merchant_id: "M10001",
      account_id: "A10001",
      order_no: "COLD-1",
      currency: "USD",
      amount: "10.00",
      card: "4242424242424242",
      expiration_month: "12",
      expiration_year: "2030",
      security_code: "123",
      encryption_data: SIG,
    }),
  };
  const cold = { sandgate: [] as number[], floor: [] as number[], sandgateRss: [] as number[], floorRss: [] as number[] };
  for (let i = 0; i < 3; i++) {
    const s = await coldStart(sandgateArgs(), probe);
    const f = await coldStart(floorArgs(), probe);
    cold.sandgate.push(s.ms);
    cold.sandgateRss.push(s.rssMb);
    cold.floor.push(f.ms);
    cold.floorRss.push(f.rssMb);
  }
  log(`cold start: Sandgate ${fixed(median(cold.sandgate))} ms, floor ${fixed(median(cold.floor))} ms`);
  // `sandgate ctl` a call, beside Node's own start (scripts/bench/ctl-start.ts)
  const ctlService = await startSandgate();
  const ctl = await benchCtl(ctlService.url);
  await ctlService.stop();
  log(`sandgate ctl health: ${fixed(ctl.ctl_ms)} ms a call, node -e '' ${fixed(ctl.node_ms)} ms (medians of ${ctl.calls})`);
  const verify = await benchVerify(o.reps, log);
  // the store partitioned by merchant, on Redis (scripts/bench/replicas.ts)
  const replicas = HAS_REDIS ? await benchReplicas(o.reps, log, o.scale < 1) : undefined;
  // every speed the docs promise, each a named scenario with its figure (scripts/bench/promises.ts)
  const promises = o.promises ? await benchPromises([], log) : [];

  const floor = await startFloor();
  const httpFloor = await startHttpFloor();
  const memory = await startSandgate();
  const persisted = await startSandgate(["--data", join(dir, "state.json")]);
  const base = o.base === undefined ? undefined : await startSandgate([], o.base);
  // --workers 2 on a shared Redis, against one process with lowdb (--data): W1 and W3
  const redis = HAS_REDIS ? await startRedis() : undefined;
  const shared = redis && (await startSandgate(["--workers", "2", "--redis-url", redis.url]));
  if (!shared) log("redis-server not found (apt-get install redis-server): no --workers 2 + Redis figures");
  // --large: two more Sandgates (memory and --data) loaded with N payments, measured in the same
  // reps as the fresh ones, right after them, so that "N stored × fresh" compares runs a minute
  // apart at most, not the start and the end of the bench
  const loaded: { where: "large" | "large_data"; service: Service }[] = [];
  const results: Results = {};
  const rss: Record<string, number> = {};
  try {
    if (o.large > 0) {
      for (const [where, extra] of [
        ["large", []],
        ["large_data", ["--data", join(dir, "large.json")]],
      ] as const) {
        const big = await startSandgate([...extra]);
        loaded.push({ where, service: big });
        log(`loading ${o.large} payments into Sandgate${extra.length ? " --data" : ""}`);
        await loadPayments(big, o.large, log);
        rss[`${where}_loaded`] = big.rssMb();
      }
      // the resident size right after the load, and after idling (see SETTLE_MS)
      await new Promise((settled) => setTimeout(settled, SETTLE_MS));
      for (const { where, service } of loaded) rss[`${where}_settled`] = service.rssMb();
    }
    // rep 0 is the warm-up: a whole rep on every server, as the others run, not counted. With a
    // quarter of one, and none on the loaded and shared ones, rep 1 still paid for V8 compiling the
    // serving code (a third to a half more CPU per request than the later reps)
    for (let rep = 0; rep <= o.reps; rep++) {
      const kept = rep === 0 ? () => undefined : keep;
      for (const w of WORKLOADS) {
        log(rep === 0 ? `warm-up (not counted) ${w.id}` : `rep ${rep}/${o.reps} ${w.id} ${w.title}`);
        // with --base, the two builds back to back, the first one alternating from rep to rep
        if (base && rep % 2 === 0) kept(results, "base", w, await onSandgate(base, w, o));
        kept(results, "memory", w, await onSandgate(memory, w, o));
        if (base && rep % 2 === 1) kept(results, "base", w, await onSandgate(base, w, o));
        kept(results, "floor", w, await onFloor(floor, w, o));
        kept(results, "http_floor", w, await onFloor(httpFloor, w, o));
        kept(results, "data", w, await onSandgate(persisted, w, o));
        if (shared && SHARED_WORKLOADS.includes(w.id)) kept(results, "shared", w, await onSandgate(shared, w, o));
        for (const { where, service } of loaded) kept(results, where, w, await onSandgate(service, w, o, true));
      }
    }
    rss.memory_after_fresh_runs = memory.rssMb();
    for (const { where, service } of loaded) rss[where] = service.rssMb();
  } finally {
    await Promise.all([floor.stop(), httpFloor.stop(), memory.stop(), persisted.stop(), base?.stop(), shared?.stop(), ...loaded.map((l) => l.service.stop())]);
    await redis?.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const med = (where: string, id: string, f: (r: Run) => number) => median((results[where]?.[id] ?? []).map(f));
  // Ratios are the median of each rep's own ratio (the two runs were a minute or two apart at
  // most), which a machine that drifts during the bench moves far less than a ratio of two medians.
  const paired = (a: string, b: string, id: string, f: (a: Run, b: Run) => number) => {
    const bs = results[b]?.[id] ?? [];
    return median((results[a]?.[id] ?? []).map((r, i) => (bs[i] ? f(r, bs[i]) : NaN)).filter(Number.isFinite));
  };
  const rate = (a: Run, b: Run) => a.rps / b.rps;
  /** b's CPU per request ÷ a's: above 1 when a costs less */
  const cpuRate = (a: Run, b: Run) => b.cpu / a.cpu;
  const rows = WORKLOADS.map((w) => {
    const cells = [
      `${w.id} ${w.title}`,
      fixed(med("memory", w.id, (r) => r.rps)),
      fixed(med("floor", w.id, (r) => r.rps)),
      fixed(paired("memory", "floor", w.id, rate), 2),
      fixed(med("memory", w.id, (r) => r.cpu)),
      fixed(med("floor", w.id, (r) => r.cpu)),
      fixed(paired("memory", "floor", w.id, cpuRate), 2),
      fixed(med("memory", w.id, (r) => r.p99)),
      fixed(med("floor", w.id, (r) => r.p99)),
      `${fixed(med("memory", w.id, (r) => r.valid * 100))} %`,
      fixed(med("http_floor", w.id, (r) => r.rps)),
      fixed(med("http_floor", w.id, (r) => r.cpu)),
      fixed(paired("memory", "http_floor", w.id, cpuRate), 2),
      fixed(med("data", w.id, (r) => r.rps)),
      fixed(paired("data", "memory", w.id, rate), 2),
    ];
    if (base)
      cells.push(
        fixed(med("base", w.id, (r) => r.cpu)),
        // this build's CPU per request ÷ the base's: below 1 when this one costs less
        fixed(paired("base", "memory", w.id, cpuRate), 2),
        fixed(med("base", w.id, (r) => r.rps)),
        fixed(paired("memory", "base", w.id, rate), 2),
      );
    if (o.large > 0) {
      cells.push(
        fixed(paired("large", "memory", w.id, rate), 2),
        // CPU per request: steadier than req/s for short runs (W2)
        fixed(paired("large", "memory", w.id, cpuRate), 2),
        fixed(med("large", w.id, (r) => r.p99)),
        fixed(paired("large_data", "data", w.id, rate), 2),
        fixed(paired("large_data", "data", w.id, cpuRate), 2),
      );
    }
    return cells;
  });
  const head = [
    "workload",
    "Sandgate req/s",
    "floor req/s",
    "× floor",
    "CPU µs/req",
    "floor CPU µs/req",
    "CPU × floor",
    "p99 ms",
    "floor p99 ms",
    "valid",
    "node:http floor req/s",
    "node:http floor CPU µs/req",
    "CPU × node:http floor",
    "--data req/s",
    "--data × memory",
  ];
  if (base) head.push("base CPU µs/req", "CPU × base", "base req/s", "req/s × base");
  if (o.large > 0)
    head.push(
      `${o.large} stored × fresh`,
      `CPU: ${o.large} stored × fresh`,
      `p99 ms (${o.large})`,
      `--data ${o.large} × fresh --data`,
      `CPU: --data ${o.large} × fresh --data`,
    );
  const sharedRows = WORKLOADS.filter((w) => SHARED_WORKLOADS.includes(w.id)).map((w) => {
    const one = med("data", w.id, (r) => r.rps);
    const two = med("shared", w.id, (r) => r.rps);
    return [
      `${w.id} ${w.title}`,
      fixed(one),
      fixed(two),
      fixed(paired("shared", "data", w.id, rate), 2),
      fixed(paired("shared", "memory", w.id, rate), 2),
      fixed(med("data", w.id, (r) => r.cpu)),
      fixed(med("shared", w.id, (r) => r.cpu)),
      fixed(med("shared", w.id, (r) => r.p99)),
      `${fixed(med("shared", w.id, (r) => r.valid * 100))} %`,
    ];
  });
  const sharedHead = [
    "workload",
    "one process, --data req/s",
    "--workers 2 + Redis req/s",
    "× one process --data",
    "× one process in memory",
    "one process, --data CPU µs/req",
    "--workers 2 CPU µs/req (primary and workers, not Redis)",
    "p99 ms",
    "valid",
  ];
  const report = {
    measured_at: new Date().toISOString(),
    node: process.version,
    cpus: availableParallelism(),
    options: o,
    cold_start_ms: { sandgate: median(cold.sandgate), floor: median(cold.floor) },
    idle_rss_mb: { sandgate: median(cold.sandgateRss), floor: median(cold.floorRss) },
    ctl_call_ms: ctl,
    rss_mb: rss,
    verify,
    replicas,
    promises,
    results,
  };
  const out = resolve(ROOT, "bench-results.json");
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(
    `${tableOf(head, rows)}\n\n` +
      (results.shared ? `${tableOf(sharedHead, sharedRows)}\n\n` : "") +
      `cold start (spawn → first /v1/authorise answer), median of 3: Sandgate ${fixed(median(cold.sandgate))} ms, floor ${fixed(median(cold.floor))} ms\n` +
      `sandgate ctl (spawn → exit of ctl health), median of ${ctl.calls}: ${fixed(ctl.ctl_ms)} ms; node -e '' ${fixed(ctl.node_ms)} ms\n` +
      `RSS just after that first answer: Sandgate ${median(cold.sandgateRss)} MB, floor ${median(cold.floorRss)} MB` +
      (rss.large
        ? `; with ${o.large} payments loaded: ${rss.large_loaded} MB (memory), ${rss.large_data_loaded} MB (--data) at once, ${rss.large_settled} MB and ${rss.large_data_settled} MB after ${SETTLE_MS / 1000} s idle; after the workloads ran on them (more payments): ${rss.large} MB, ${rss.large_data} MB`
        : "") +
      `\n${verifyTable(verify)}` +
      (replicas ? `\n\n${replicasTable(replicas)}` : "") +
      (promises.length ? `\n\nSpeed promises (figures, not verdicts on a noisy machine):\n\n${promisesTable(promises)}\n` : "") +
      `\n${o.connections} connections, ${o.reps} reps, medians${o.pin ? "; servers pinned to one CPU, the load generator to the other(s)" : ""}; wrote ${out}\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});

// `tsx scripts/bench/side-by-side.ts --base <checkout> [--large 100000] [--data] [--reps 6] [--pin] [--workloads W1,W2,W5]`
// Two builds alive at once, judged against each other: the bundle of another checkout (--base, built
// with `npm run build` there) and this one's (dist/sandgate.js), each its own process, loaded with
// the same payments through the API, then one unmeasured pass of the workloads on each (warm-up),
// then the same workloads on each in turn (the order swapped every rep), without resets. Per
// workload: each build's server CPU per request (every thread, GC included) and req/s, and the
// median of the reps' paired ratios (this build's ÷ the base's: CPU below 1 is cheaper, req/s above
// 1 faster); also the resident size of each right after the load and after 60 s idle. This is how
// a change to the serving code is measured before `npm run bench` runs it against the floor.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { NODE_FLAGS } from "../node-flags.js";
import { pin, ROOT, started, type Service } from "./processes.js";
import { loadPayments, median, requestsFor, run } from "./run.js";
import { WORKLOADS, type Workload } from "./workloads.js";

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    large: { type: "string", default: "100000" },
    data: { type: "boolean", default: false },
    reps: { type: "string", default: "6" },
    pin: { type: "boolean", default: false },
    workloads: { type: "string", default: "W1,W2,W5" },
    connections: { type: "string", default: "10" },
  },
});
if (!values.base) throw new Error("--base <checkout with a built dist/sandgate.js> is required");
const large = Number(values.large);
const reps = Number(values.reps);
const connections = Number(values.connections);
const chosen = values.workloads.split(",").map((id) => {
  const w = WORKLOADS.find((x) => x.id === id);
  if (!w) throw new Error(`no workload ${id}`);
  return w;
});
const log = (text: string) => process.stderr.write(`${text}\n`);

/** a workload run on a server as it is (no reset): its server CPU per request and req/s */
async function measure(s: Service, w: Workload): Promise<{ cpu: number; rps: number }> {
  const requests = requestsFor(w, { connections, scale: 1 });
  const { cpu, rps } = await run(s, w, await w.prepare(s.url, requests), requests, connections, false);
  return { cpu, rps };
}

async function main(): Promise<void> {
  if (values.pin) pin();
  const dir = mkdtempSync(join(tmpdir(), "sandgate-sbs-"));
  const builds = [
    { name: "base", bundle: resolve(values.base!, "dist", "sandgate.js") },
    { name: "this", bundle: resolve(ROOT, "dist", "sandgate.js") },
  ];
  const services: Service[] = [];
  try {
    for (const b of builds) {
      const extra = values.data ? ["--data", join(dir, `${b.name}.json`)] : [];
      services.push(await started([...NODE_FLAGS, b.bundle, "--port", "0", "--host", "127.0.0.1", "--seed", "bench", ...extra]));
    }
    const rss: Record<string, number[]> = { loaded: [], settled: [] };
    for (const s of services) {
      await loadPayments(s, large, log);
      rss.loaded!.push(s.rssMb());
    }
    await new Promise((settled) => setTimeout(settled, 60_000));
    for (const s of services) rss.settled!.push(s.rssMb());
    // one unmeasured pass of every workload on each build first: without it the first rep paid for
    // V8 compiling the serving code (a third to a half more CPU per request than the later reps)
    for (const w of chosen) for (const s of services) await measure(s, w);
    const cpu: Record<string, number[][]> = {};
    const rps: Record<string, number[][]> = {};
    for (let rep = 0; rep < reps; rep++) {
      for (const w of chosen) {
        const order = rep % 2 ? [1, 0] : [0, 1];
        const row: { cpu: number; rps: number }[] = [];
        for (const i of order) row[i] = await measure(services[i]!, w);
        (cpu[w.id] ??= []).push(row.map((r) => r.cpu));
        (rps[w.id] ??= []).push(row.map((r) => r.rps));
        log(
          `rep ${rep + 1} ${w.id}: base ${row[0]!.cpu.toFixed(0)} µs ${row[0]!.rps.toFixed(0)} req/s, this ${row[1]!.cpu.toFixed(0)} µs ${row[1]!.rps.toFixed(0)} req/s (CPU ${(row[1]!.cpu / row[0]!.cpu).toFixed(2)})`,
        );
      }
    }
    const paired = (rows: number[][]) => median(rows.map(([a, b]) => b! / a!)).toFixed(2);
    const lines = [
      "| workload | base CPU µs/req | this CPU µs/req | CPU this ÷ base (paired median) | per rep | base req/s | this req/s | req/s this ÷ base |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ];
    for (const w of chosen) {
      const rows = cpu[w.id]!;
      const ratios = rows.map(([a, b]) => b! / a!);
      const r = rps[w.id]!;
      lines.push(
        `| ${w.id} | ${median(rows.map((x) => x[0]!)).toFixed(0)} | ${median(rows.map((x) => x[1]!)).toFixed(0)} | ${paired(rows)} | ${ratios.map((x) => x.toFixed(2)).join(" ")} | ${median(r.map((x) => x[0]!)).toFixed(0)} | ${median(r.map((x) => x[1]!)).toFixed(0)} | ${paired(r)} |`,
      );
    }
    lines.push(
      "",
      `RSS MB right after the load: base ${rss.loaded![0]}, this ${rss.loaded![1]}; after 60 s idle: base ${rss.settled![0]}, this ${rss.settled![1]}; after the reps: base ${services[0]!.rssMb()}, this ${services[1]!.rssMb()}`,
    );
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    await Promise.all(services.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

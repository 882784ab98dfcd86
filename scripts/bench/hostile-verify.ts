// `npm run bench:hostile-verify [-- --reps 3]`: the team's traffic while one tester uploads a hostile
// recording. A built Sandgate (dist/sandgate.js) in its own process; a 20 MB recording whose HTML
// answer opens 3.4 million <form> tags and closes none, and three ordinary verifies, are posted at
// once; meanwhile health and a card payment are asked every 20 ms, one after the other. Per rep:
// their p50/p99/max latency, how long the hostile verify took and how it was answered, the server's
// peak RSS (VmHWM) and its CPU. Baseline in the same run: the same health and payment loop with no
// verify at all, so the figures read as ratios on a noisy machine.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { SIG } from "./workloads.js";
import { startSandgate, type Service } from "./processes.js";
import { hostileRecordings } from "./hostile-recording.js";

const { values } = parseArgs({ options: { reps: { type: "string", default: "3" } } });
const reps = Number(values.reps);

const ACME = { merchant_id: "M10001", account_id: "A10001" };
let order = 0;
const payment = () =>
  JSON.stringify({
    ...ACME,
    order_no: `HV-${process.pid}-${++order}`,
    currency: "USD",
    amount: "10.00",
    card: "4242424242424242",
    expiration_month: "12",
    expiration_year: "2030",
    security_code: "123",
    encryption_data: SIG,
  });

/** A one-exchange recording of a real payment (its own HAR export), and the same with a hostile HTML answer. */
async function recordings(s: Service): Promise<{ normal: string; hostile: string }> {
  await fetch(`${s.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: payment() });
  return hostileRecordings(s.url);
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const peakRssMb = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

/** Health then a payment, every 20 ms, until `until` settles (or for `ms` when there is nothing to wait for). */
async function traffic(s: Service, until: Promise<unknown> | number): Promise<{ health: number[]; pay: number[] }> {
  let done = false;
  if (typeof until === "number") setTimeout(() => (done = true), until);
  else void until.then(() => (done = true));
  const health: number[] = [];
  const pay: number[] = [];
  while (!done) {
    let t = performance.now();
    await (await fetch(`${s.url}/__sandbox/health`)).arrayBuffer();
    health.push(performance.now() - t);
    t = performance.now();
    await (await fetch(`${s.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: payment() })).arrayBuffer();
    pay.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { health, pay };
}

const row = (label: string, xs: number[]) =>
  `| ${label} | ${xs.length} | ${percentile(xs, 50).toFixed(1)} | ${percentile(xs, 99).toFixed(1)} | ${Math.max(...xs).toFixed(1)} |`;

for (let rep = 1; rep <= reps; rep++) {
  const s = await startSandgate();
  try {
    const { normal, hostile } = await recordings(s);
    const quiet = await traffic(s, 4_000);
    const cpu0 = s.cpuMicros();
    const t0 = performance.now();
    let hostileMs = 0;
    let hostileAnswer = "";
    const post = (body: string) => fetch(`${s.url}/__sandbox/verify`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const verifies = Promise.all([
      post(hostile).then(async (r) => {
        hostileMs = performance.now() - t0;
        hostileAnswer = `${r.status} ${((await r.json()) as { error?: string }).error ?? "report"}`;
      }),
      ...[1, 2, 3].map(() => post(normal).then((r) => r.arrayBuffer())),
    ]);
    const busy = await traffic(s, verifies);
    console.log(
      `\nrep ${rep}: hostile verify (${(hostile.length / 1e6).toFixed(1)} MB) answered ${hostileAnswer} in ${(hostileMs / 1000).toFixed(1)} s; all four done in ${((performance.now() - t0) / 1000).toFixed(1)} s; server CPU ${((s.cpuMicros() - cpu0) / 1e6).toFixed(1)} s; peak RSS ${peakRssMb(s.pid).toFixed(0)} MB`,
    );
    console.log("| ms | n | p50 | p99 | max |\n| --- | --- | --- | --- | --- |");
    console.log(row("health, no verify", quiet.health));
    console.log(row("health, during the verifies", busy.health));
    console.log(row("payment, no verify", quiet.pay));
    console.log(row("payment, during the verifies", busy.pay));
  } finally {
    await s.stop();
  }
}

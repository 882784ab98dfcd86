// One measured run of a workload (autocannon against a server in its own process), and what the
// bench and the side-by-side comparison both need around it.
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import type { Service } from "./processes.js";
import { createPayments, type Context, type Step, type Workload } from "./workloads.js";

export interface Run {
  rps: number;
  p99: number;
  /** the server's CPU time per request (every thread, GC included), µs */
  cpu: number;
  /** share of answers that did what was asked (Sandgate only) */
  valid: number;
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : NaN;
};

/** Response sizes per workload step, from Sandgate's last run: what the floor sends back. */
const sizes = new Map<string, number[]>();

export async function run(target: Service, w: Workload, steps: Step[], requests: number, connections: number, floor: boolean): Promise<Run> {
  let valid = 0;
  const seen = steps.map(() => [] as number[]);
  const canned = sizes.get(w.id) ?? steps.map(() => 100);
  const started = performance.now();
  const cpuBefore = target.cpuMicros();
  let lastAnswer = started;
  const result = await autocannon({
    url: target.url,
    connections,
    amount: requests,
    requests: steps.map((step, i) => ({
      method: "POST" as const,
      path: step.path,
      headers: {
        "content-type": step.type,
        ...(floor ? { "x-floor-bytes": String(canned[i]), "x-floor-type": step.path === "/v1/authorise" ? "application/xml" : "application/json" } : {}),
      },
      setupRequest: (req: autocannon.Request, context: Context) => ({ ...req, body: step.body(context) }),
      onResponse: (status: number, body: string, context: Context) => {
        lastAnswer = performance.now();
        if (floor) return;
        if (status === 200 && step.check(body, context)) valid++;
        seen[i]!.push(body.length);
      },
    })),
  } as autocannon.Options);
  if (!floor)
    sizes.set(
      w.id,
      seen.map((s) => median(s) || 100),
    );
  // autocannon ends a run of a fixed number of requests at its next one-second tick: time to the last answer instead
  const seconds = (lastAnswer - started) / 1000;
  const cpu = (target.cpuMicros() - cpuBefore) / Math.max(1, result.requests.total);
  return { rps: result.requests.total / seconds, p99: result.latency.p99, cpu, valid: floor ? 1 : valid / Math.max(1, result.requests.total) };
}

/** At least a few requests per connection, and whole lifecycles for W5's six steps. */
export const requestsFor = (w: Workload, o: { connections: number; scale: number }) =>
  Math.max(o.connections * 6, Math.round((w.requests * o.scale) / (o.connections * 6)) * o.connections * 6);

/** N approved payments loaded through the API, 4 × 1,250 at a time. */
export async function loadPayments(s: Service, n: number, log: (text: string) => void): Promise<void> {
  for (let done = 0; done < n; done += 5000) {
    await Promise.all(Array.from({ length: 4 }, (_, k) => createPayments(s.url, `BULK${k}`, Math.min(5000, n - done) / 4)));
    log(`  ${Math.min(done + 5000, n)} of ${n} payments loaded, RSS ${s.rssMb()} MB`);
  }
}

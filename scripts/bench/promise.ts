// What a speed promise of the docs is to the bench: a named scenario that measures one figure under
// the load the promise names, beside a baseline taken in the same run where the figure is a
// latency (so a noisy machine is seen as noise), and says whether the figure holds the promise. The
// bench reports; it never gates anything: a figure on a busy machine is information, not a verdict.
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { CARD, SIG } from "./workloads.js";

export interface Figure {
  /** the figure the promise is about, in `unit` */
  value: number;
  unit: string;
  /** the same figure with nothing else going on, taken in the same run (a latency's baseline) */
  quiet?: number;
  /** more to say beside it: counts, the load made */
  note?: string;
}

export interface SpeedPromise {
  /** the scenario's name: `npm run bench:promises -- <name>` runs it alone */
  name: string;
  /** where the docs make the promise */
  doc: string;
  /** the promise in the docs' words */
  promise: string;
  /** the bound the figure must stay under to hold it */
  bound: number;
  measure(): Promise<Figure>;
}

/** The p-th percentile of a list of numbers (p 99: the 99th). */
export const percentile = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;

/** How long `run` takes, in ms. */
export async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/** `ask` once every `everyMs` until `done()` says so (at least `atLeast` times): each answer's ms. */
export async function sampled(ask: () => Promise<unknown>, done: () => boolean, { everyMs = 20, atLeast = 20 } = {}): Promise<number[]> {
  const times: number[] = [];
  while (!done() || times.length < atLeast) {
    times.push(await timed(ask));
    await sleep(everyMs);
  }
  return times;
}

/** A GET of Sandgate's health, its body read. */
export const health = (url: string) => fetch(`${url}/__sandbox/health`).then((r) => r.arrayBuffer());

let order = 0;
/** A direct card payment of `merchant` (any signature: lenient mode), its answer read; its status. */
export async function pay(url: string, merchant = "M10001", account = "A10001", extra: Record<string, unknown> = {}): Promise<number> {
  const res = await fetch(`${url}/v1/authorise`, {
    method: "POST",
    // a request to a replica killed meanwhile may never be answered: it counts as gone
    signal: AbortSignal.timeout(10_000),
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      merchant_id: merchant,
      account_id: account,
      order_no: `P-${process.pid}-${++order}`,
      currency: "USD",
      amount: "10.00",
      ...CARD,
      encryption_data: SIG,
      ...extra,
    }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** A paying loop's longest wait for an answer, from `since()` on (0 before it is set), and its failures. */
export function gapsOf(url: string, merchant: string, since: () => number, loops = 2) {
  let stop = false;
  let longest = 0;
  let failed = 0;
  let answered = 0;
  const loop = async () => {
    let last = performance.now();
    while (!stop) {
      const status = await pay(url, merchant).catch(() => undefined);
      if (status === undefined) return; // the replica is gone
      if (status !== 200) failed++;
      answered++;
      const now = performance.now();
      if (since()) longest = Math.max(longest, now - Math.max(last, since()));
      last = now;
    }
  };
  const running = Array.from({ length: loops }, loop);
  return {
    answered: () => answered,
    /** forgets what was seen so far (a warm-up) */
    reset: () => void (longest = failed = answered = 0),
    async stop() {
      stop = true;
      await Promise.all(running);
      return { longest, failed, answered };
    },
  };
}

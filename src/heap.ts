// Memory of a long-lived process (src/main.ts imports this first; startSandbox() in a merchant's own
// process leaves their V8 alone). After each full collection V8 lets the old generation grow to up
// to ~4× what survived it before it collects again. That is right for a sandbox holding little (a
// tighter heap costs CPU in collections: capturing one payment took 124 µs of CPU with V8's default
// and 208 µs with growth held to 25 %), and wrong for one holding 100,000 payments (~100 MB live,
// ~400 MB of heap). So the room the heap may grow by is held near HEADROOM_MB, as a share of what
// is live: up to 3× (V8's own largest factor is 4×) while little is live, never below 50 % once
// much is. The share is set again after every full collection, before the state can have grown
// much: V8 reads it when the *next* collection sets the limit, so a share that only changed once the
// heap was large came one collection late, and a fast load of 100,000 payments went from ~60 MB
// live to a limit of ~250 MB (~290 MB resident right after the load; ~220 MB with this rule).
// What can only be set when the process starts (the young generation's size, V8's memory reducer
// off) is in NODE_FLAGS (src/heap-growth.ts), with why: `npm start` and the Docker image pass it.
import { constants, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { growingPercent } from "./heap-growth.js";

let current = -1;
function check(): void {
  const percent = growingPercent(getHeapStatistics().used_heap_size / 2 ** 20);
  if (percent === current) return;
  current = percent;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}

check();
new PerformanceObserver((list) => {
  if (list.getEntries().some((e) => (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) check();
}).observe({ entryTypes: ["gc"] });

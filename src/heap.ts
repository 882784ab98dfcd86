// Memory of a long-lived process (src/main.ts imports this first; startSandbox() in a merchant's own
// process leaves their V8 alone). V8 lets the old generation grow to up to ~4× what survived the
// last full collection before it collects again. That is right for a sandbox holding little (a
// tighter heap costs CPU in collections: capturing one payment took 124 µs of CPU with V8's
// default and 208 µs with growth held to 25%), and wrong for one holding 100,000 payments (~125 MB
// live, ~500 MB resident). So growth is held to HELD_GROWING_PERCENT only while the live heap is
// large: measured right after each full collection (when the heap holds what is live, not garbage
// yet to be collected), with a gap between the two thresholds so it does not flap.
// The young generation's size can only be set when the process starts: `npm start` and the Docker
// image run `node --max-semi-space-size=4` (4 MB semi-spaces instead of 16: with 100,000 payments
// stored, ~246 MB resident instead of ~279, for about 5 % more CPU per request, within the noise).
import { constants, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";
import { getHeapStatistics, setFlagsFromString } from "node:v8";

/** live heap at start is ~20 MB; 48 MB is ~30,000 payments held */
export const LARGE_HEAP_MB = 48;
export const SMALL_HEAP_MB = 32;
export const HELD_GROWING_PERCENT = 50;

let held = false;
function check(): void {
  const usedMb = getHeapStatistics().used_heap_size / 2 ** 20;
  if (!held && usedMb > LARGE_HEAP_MB) held = true;
  else if (held && usedMb < SMALL_HEAP_MB) held = false;
  else return;
  // 0 is V8's own choice of factor
  setFlagsFromString(`--heap-growing-percent=${held ? HELD_GROWING_PERCENT : 0}`);
}

new PerformanceObserver((list) => {
  if (list.getEntries().some((e) => (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) check();
}).observe({ entryTypes: ["gc"] });

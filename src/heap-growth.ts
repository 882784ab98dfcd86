// How far V8 may let the heap grow before its next full collection (src/heap.ts applies it), and
// the start-up flags a Sandgate process runs with.

/**
 * V8 flags `npm start`, the Docker image and the bench start node with (start-up only: V8 reads
 * them once, and NODE_OPTIONS refuses the second). A test holds package.json and the Dockerfile to them.
 * - `--max-semi-space-size=16`: the young generation V8 picks by itself on a roomy 64-bit machine,
 *   made so everywhere. With `--data` a request's objects live until its commit is on disk, and 4 MB
 *   semi-spaces moved them to the old generation: loading 100,000 payments ran 21 full collections
 *   instead of 2, and with them stored every run paid for one.
 * - `--no-memory-reducer`: V8's memory reducer collects when the process has gone quiet, and each
 *   full collection sets where the next one comes; with it on, bursts after pauses paid full
 *   collections of everything stored (100,000 payments, 30 s pauses: ~150–200 ms of CPU each,
 *   50-order captures at 911 µs of CPU per request instead of ~430). Without it the heap still
 *   never holds more than the room below; it keeps that room while idle.
 */
export const NODE_FLAGS = ["--max-semi-space-size=16", "--no-memory-reducer"] as const;

/** the room to grow by before the next full collection, whatever is live (fresh state: ~22 MB live) */
export const HEADROOM_MB = 48;
export const MIN_GROWING_PERCENT = 50;
export const MAX_GROWING_PERCENT = 300;

/** V8's --heap-growing-percent for a heap with `liveMb` live: HEADROOM_MB as a share of it, within the bounds */
export function growingPercent(liveMb: number): number {
  const share = (100 * HEADROOM_MB) / Math.max(liveMb, 1);
  return Math.round(Math.min(MAX_GROWING_PERCENT, Math.max(MIN_GROWING_PERCENT, share)));
}

// How far V8 may let the heap grow before its next full collection (src/heap.ts applies it).

/** the room to grow by before the next full collection, whatever is live (fresh state: ~22 MB live) */
export const HEADROOM_MB = 48;
export const MIN_GROWING_PERCENT = 50;
export const MAX_GROWING_PERCENT = 300;

/** V8's --heap-growing-percent for a heap with `liveMb` live: HEADROOM_MB as a share of it, within the bounds */
export function growingPercent(liveMb: number): number {
  const share = (100 * HEADROOM_MB) / Math.max(liveMb, 1);
  return Math.round(Math.min(MAX_GROWING_PERCENT, Math.max(MIN_GROWING_PERCENT, share)));
}

// Memory before speed, for the process only (src/main.ts imports this first; startSandbox() in a
// merchant's own process leaves their V8 alone). V8 lets the old generation grow to up to four
// times what survived the last full collection before it collects again: with 100,000 payments
// held (~100 MB live), the process sat at ~500 MB resident. Growing by a quarter instead keeps it
// near 260 MB, for ~7% more CPU in garbage collection at that size and no measurable cost on a
// fresh sandbox (npm run bench; figures in the README).
import { setFlagsFromString } from "node:v8";

export const HEAP_GROWING_PERCENT = 25;
setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);

// The V8 flags a Sandgate process starts with: `npm start`, the Docker image and the bench pass
// them (a test holds package.json and the Dockerfile to them). Start-up flags only: V8 reads them
// once, and Node's documentation warns that changing V8's settings once it runs may crash or lose
// data. startSandbox() in a merchant's own process leaves their V8 alone.
/**
 * - `--max-semi-space-size=16`: the young generation V8 picks by itself on a roomy 64-bit machine,
 *   made so everywhere. With `--data` a request's objects live until its commit is on disk, and 4 MB
 *   semi-spaces moved them to the old generation: loading 100,000 payments ran 21 full collections
 *   instead of 2, and with them stored every run paid for one.
 * - `--no-memory-reducer`: V8's memory reducer collects when the process has gone quiet, and each
 *   full collection sets where the next one comes; with it on, bursts after pauses paid full
 *   collections of everything stored (100,000 payments, 30 s pauses: ~150–200 ms of CPU each,
 *   50-order captures at 911 µs of CPU per request instead of ~430).
 * - `--heap-growing-percent=100`: after a full collection the old generation may grow to twice what
 *   survived it before the next one (V8 alone lets it grow up to 4×): 100,000 payments (~100 MB
 *   live) stay under 300 MB resident, and a fresh sandbox (~22 MB live) still has room enough that
 *   full collections stay rare.
 */
export const NODE_FLAGS = ["--max-semi-space-size=16", "--no-memory-reducer", "--heap-growing-percent=100"] as const;

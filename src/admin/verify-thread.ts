// verify in a worker thread (node:worker_threads), with a memory ceiling and a time limit: the
// serving thread only hands the recording over (its bytes are moved, not copied) and waits. A thread
// per recording: its memory is given back whole when it ends, whatever the recording held.
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { packageRoot } from "../base/paths.js";
import type { VerifyOptions, VerifyReport } from "../verify-report/verify-report.js";

export type ThreadAnswer = { report: VerifyReport } | { error: "invalid_har" | "verify_failed" | "verify_out_of_memory" | "verify_timed_out"; message: string };

export interface ThreadLimits {
  /** the thread's old-generation heap, MB: a recording that needs more is refused */
  memoryMb: number;
  /** how long a replay may take before the thread is stopped */
  timeoutMs: number;
}

const VERIFY_LIMITS: ThreadLimits = { memoryMb: 256, timeoutMs: 60_000 };

/**
 * The worker's code: the built dist/proof/verify-worker.js (also when this code runs from the
 * one-file bundle dist/sandgate.js), or, when Sandgate runs from its TypeScript sources (its own
 * tests), src/proof/verify-worker.ts loaded through tsx, which a worker does not inherit.
 */
function workerSource(): { source: string | URL; eval: boolean } {
  const fromSources = import.meta.url.endsWith(".ts");
  const file = pathToFileURL(join(packageRoot, fromSources ? "src/proof/verify-worker.ts" : "dist/proof/verify-worker.js"));
  if (!fromSources) return { source: file, eval: false };
  // tsx's ES module entry (its "import" export of tsx/esm/api), found from its package file
  const tsx = new URL("./dist/esm/api/index.mjs", pathToFileURL(createRequire(import.meta.url).resolve("tsx/package.json"))).href;
  return { source: `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(file.href)}); })`, eval: true };
}

/** Replays `har` (a HAR document's bytes) in a thread of its own; never throws. */
export function verifyInThread(har: Buffer, options: VerifyOptions, limits: ThreadLimits = VERIFY_LIMITS): Promise<ThreadAnswer> {
  // a Buffer may share its memory with others (Node's pool): move only one that owns it
  const owned = har.byteOffset === 0 && har.buffer.byteLength === har.byteLength ? new Uint8Array(har.buffer) : new Uint8Array(har);
  const { source, eval: isEval } = workerSource();
  return new Promise((resolve) => {
    let answered = false;
    const answer = (a: ThreadAnswer) => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(a);
    };
    const worker = new Worker(source, {
      eval: isEval,
      workerData: { har: owned, options },
      transferList: [owned.buffer as ArrayBuffer],
      resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb },
      stdout: true, // the thread's own Sandgate is silent; anything else it prints is not the server's
      stderr: true,
    });
    const timer = setTimeout(
      () =>
        answer({
          error: "verify_timed_out",
          message: `the replay took longer than ${Math.round(limits.timeoutMs / 1000)} s and was stopped: record fewer exchanges, or run \`sandgate verify <file.har>\` on the command line`,
        }),
      limits.timeoutMs,
    );
    worker.on("message", (m: ThreadAnswer) => answer(m));
    worker.on("error", (err: Error & { code?: string }) =>
      answer(
        err.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? {
              error: "verify_out_of_memory",
              message: `the recording needs more than the ${limits.memoryMb} MB verify may use: record fewer exchanges, or run \`sandgate verify <file.har>\` on the command line`,
            }
          : { error: "verify_failed", message: err.message },
      ),
    );
    worker.on("exit", (code) => answer({ error: "verify_failed", message: `the replay's thread ended (code ${code}) before it answered` }));
  });
}

// The thread POST /__sandbox/verify runs in (src/admin/verify-thread.ts starts it, by its file name): it reads the
// recording, replays it against a fresh Sandgate of its own and posts the report back. Nothing of it
// runs on the serving thread, so a heavy or hostile recording delays no one else's request.
import { parentPort, workerData } from "node:worker_threads";
import { HarError, parseHar } from "./har.js";
import { verifyEntries } from "./verify.js";
import type { VerifyOptions } from "../verify-report/verify-report.js";
import type { ThreadAnswer } from "../admin/verify-thread.js";

const { har, options } = workerData as { har: Uint8Array; options: VerifyOptions };

async function run(): Promise<ThreadAnswer> {
  try {
    const entries = parseHar(Buffer.from(har.buffer, har.byteOffset, har.byteLength).toString("utf8"), "the HAR");
    return { report: await verifyEntries(entries, options) };
  } catch (err) {
    return { error: err instanceof HarError ? "invalid_har" : "verify_failed", message: (err as Error).message };
  }
}

parentPort!.postMessage(await run());

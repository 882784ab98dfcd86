// POST /__sandbox/verify: `sandgate verify` over HTTP, for the dashboard's Verify tab and for CI
// that has no shell at hand. The body is a recording of the real gateway (a HAR document); the
// answer is verify's JSON report. The replay runs against a FRESH in-process Sandgate built with
// this server's fixtures, scenario folder and current global scenario, never against this server:
// a tester checking a recording must not change the sandbox the rest of the team is using.
// Mounted by operatorApi after the ADMIN_TOKEN guard and before its 100 kb JSON parser (a HAR of a
// real session is easily megabytes), so this route reads its own body. The replay runs in a worker
// thread (verify-thread.ts), one at a time per process with three more waiting; the fourth
// waiting call is refused with 429 and Retry-After before its body is read.
import express, { type NextFunction, type Request, type Response } from "express";
import type { Deps } from "../deps/deps.js";
import { depsOf } from "../http/in-unit.js";
import type { On } from "./call-handlers.js";
import { verifyInThread, type ThreadAnswer } from "./verify-thread.js";
import { throughGate } from "./gate.js";
import { problem } from "./shared.js";

/** The largest recording accepted (20 MB); bigger answers 413. */
export const HAR_LIMIT_BYTES = 20 * 1024 * 1024;

/**
 * The body as bytes whatever its Content-Type (application/json is what the dashboard sends, but
 * `curl --data-binary @file.har` sends a form type): the thread's parseHar then says precisely what
 * is wrong with it (empty, cut off, not JSON, not HAR), which a JSON parser's error would not.
 */
const readBytes = express.raw({ type: () => true, limit: HAR_LIMIT_BYTES });

/** How each failure of the thread is answered. */
const FAILURE_STATUS: Record<Exclude<ThreadAnswer, { report: unknown }>["error"], number> = {
  invalid_har: 400,
  verify_failed: 500,
  verify_out_of_memory: 413,
  verify_timed_out: 504,
};

/** ?ignore= (repeatable; a comma-separated list works too, as typed in the dashboard): paths left out of the comparison. */
function ignoredPaths(req: Request): string[] {
  const raw = req.query.ignore;
  const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === "string");
  return values
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter((v) => v !== "");
}

const wanted = (value: unknown) => typeof value === "string" && /^(1|true|yes|on)$/i.test(value);

/** Reads the body; a body the parser refused (too large: 413, an unknown charset: 415, …) is answered in the operator API's format. */
function readBody(req: Request, res: Response, next: NextFunction): void {
  readBytes(req, res, (err?: unknown) => {
    if (!err) return next();
    const status = (err as { status?: unknown }).status;
    if (status === 413)
      problem(res, 413, "body_too_large", "the HAR is larger than 20 MB: record fewer exchanges, or run `sandgate verify <file.har>` on the command line");
    else if (typeof status === "number" && status >= 400 && status < 500)
      problem(res, status, "unreadable_body", `the body cannot be read: ${(err as Error).message}`);
    else next(err);
  });
}

export function verifyApi(server: Deps, on: On): void {
  on("verifyRecording", throughGate(1, 3, "verify", 10), readBody, async (req: Request, res: Response) => {
    const deps = depsOf(res, server);
    const bytes = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const answer = await verifyInThread(bytes, {
      fixtures: deps.config.fixtures,
      scenarios: deps.config.scenarios,
      scenario: deps.scenarios.global(),
      ignore: ignoredPaths(req),
      suggest: wanted(req.query.suggest),
    });
    if ("report" in answer) return void res.json(answer.report);
    // the fresh Sandgate could not start (a scenario folder broken since this one started, …): the CLI says this in one line too
    if (answer.error === "verify_failed") deps.log.error({ message: answer.message }, "verify failed");
    const message = answer.error === "verify_failed" ? `the recording could not be replayed: ${answer.message}` : answer.message;
    problem(res, FAILURE_STATUS[answer.error], answer.error, message);
  });
}

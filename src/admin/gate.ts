// Heavy operator work (verify's replay, receiver checks, HAR exports) at most `running` at a time
// per process, `queued` more waiting in order; past that a call is refused at once with 429 and
// Retry-After, before its body is read. One tester's upload never holds the rest of the team.
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { problem } from "./shared.js";

export interface Gate {
  /** a place, or undefined when every place is taken; the place's release() must be called once */
  enter(): Promise<() => void> | undefined;
}

export function createGate(running: number, queued: number): Gate {
  let active = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };
  const once = () => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      release();
    };
  };
  return {
    enter() {
      if (active < running) {
        active++;
        return Promise.resolve(once());
      }
      if (waiting.length >= queued) return undefined;
      return new Promise((resolve) => waiting.push(() => resolve(once())));
    },
  };
}

/**
 * Express: waits for a place of `gate` (released when the answer is sent or the client goes), or
 * answers 429 `busy` with Retry-After when none is left.
 */
export function throughGate(gate: Gate, what: string, retryAfterSeconds: number): RequestHandler {
  return (_req: Request, res: Response, next: NextFunction) => {
    const place = gate.enter();
    if (!place) {
      res.setHeader("Retry-After", String(retryAfterSeconds));
      return problem(res, 429, "busy", `${what} is busy with other calls on this process: try again in ${retryAfterSeconds} s`);
    }
    void place.then((release) => {
      res.on("close", release);
      if (res.destroyed) return release();
      next();
    });
  };
}

// Heavy operator work (verify's replay, receiver checks, HAR exports) at most `running` at a time
// per process, `queued` more waiting in order (src/base/slots.ts); past that a call is refused at once
// with 429 and Retry-After, before its body is read. One tester's upload never holds the rest of the team.
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { createSlots } from "../base/slots.js";
import { problem } from "./shared.js";

/**
 * Express: waits for one of `running` places (`queued` may wait), released once when the answer is
 * sent or the client goes; answers 429 `busy` with Retry-After when none is left.
 */
export function throughGate(running: number, queued: number, what: string, retryAfterSeconds: number): RequestHandler {
  const slots = createSlots(running, queued);
  return (_req: Request, res: Response, next: NextFunction) => {
    const place = slots.tryAcquire();
    if (!place) {
      res.setHeader("Retry-After", String(retryAfterSeconds));
      return problem(res, 429, "busy", `${what} is busy with other calls on this process: try again in ${retryAfterSeconds} s`);
    }
    void place.then(() => {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        slots.release();
      };
      res.on("close", release);
      if (res.destroyed) return release();
      next();
    });
  };
}

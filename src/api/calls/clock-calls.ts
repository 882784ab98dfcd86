// Operator calls: The sandbox's clock: read it, move it (the whole sandbox's, or one merchant's).
// Entries of the one table (src/api/operator-calls.ts); see OperatorCall for what each field means.
import { z } from "zod";
import { MALFORMED, type OperatorCall } from "../operator-call.js";
import { clock, int } from "../operator-answers.js";
import { clockBody } from "../operator-bodies.js";

const s = z.string();

export const CLOCK_CALLS = [
  {
    method: "get",
    path: "/__sandbox/clock",
    operationId: "getClock",
    scope: "own",
    summary: "the sandbox clock, or a merchant's own (merchant_id): now, and how far it runs ahead of real time",
    query: { merchant_id: "this merchant's clock (the sandbox's plus how far its own was advanced)" },
    answer: clock,
    problems: { 404: "merchant_not_found" },
  },
  {
    method: "post",
    path: "/__sandbox/clock",
    operationId: "advanceClock",
    form: "/__sandbox/ui/clock",
    scope: "own",
    body: clockBody,
    summary: 'moves the clock forward and applies what fell due: {"advance":"3d"} or {"advance_seconds":90}; with "merchant_id", that merchant\'s clock only',
    answer: z.strictObject({
      now: s,
      offset_ms: z.number(),
      applied: int,
      merchant_id: s.optional().describe("the merchant whose clock moved (absent: the sandbox's)"),
    }),
    problems: { 400: `invalid_advance: not a duration, negative, or over 3660 days; ${MALFORMED}`, 404: "merchant_not_found" },
  },
] as const satisfies readonly OperatorCall[];

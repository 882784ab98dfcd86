// Operator calls: The sandbox's clock: read it, move it on, set it later, freeze and unfreeze it
// (the whole sandbox's, or one merchant's), as a Stripe test clock.
// Entries of the one table (src/api/operator-calls.ts); see OperatorCall for what each field means.
import { z } from "zod";
import { MALFORMED, type OperatorCall } from "../operator-call.js";
import { clock, int } from "../operator-answers.js";
import { clockBody, clockSetBody, clockWhoseBody } from "../operator-bodies.js";

const s = z.string();
const moved = z.strictObject({
  now: s,
  offset_ms: z.number(),
  frozen: z.boolean(),
  applied: int,
  merchant_id: s.optional().describe("the merchant whose clock moved (absent: the sandbox's)"),
});
const whose = {
  400: `invalid_merchant: merchant_id is not a non-empty string; unknown_field: a key other than merchant_id; ${MALFORMED}`,
  404: "merchant_not_found",
};

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
    answer: moved,
    problems: { 400: `invalid_advance: not a duration, negative, or over 3660 days; ${MALFORMED}`, 404: "merchant_not_found" },
  },
  {
    method: "post",
    path: "/__sandbox/clock/set",
    operationId: "setClock",
    form: "/__sandbox/ui/clock/set",
    scope: "own",
    body: clockSetBody,
    summary:
      'sets the clock to a later moment and applies what fell due: {"to":"2027-01-01T00:00:00Z"}; a frozen clock stays frozen there; with "merchant_id", that merchant\'s clock only',
    answer: moved,
    problems: {
      400: `invalid_time: not an ISO 8601 moment with its zone; clock_backwards: earlier than the clock's time (nothing changes); invalid_advance: over 3660 days ahead; ${MALFORMED}`,
      404: "merchant_not_found",
    },
  },
  {
    method: "post",
    path: "/__sandbox/clock/freeze",
    operationId: "freezeClock",
    form: "/__sandbox/ui/clock/freeze",
    scope: "own",
    body: clockWhoseBody,
    summary:
      'time stands still for the clock until it is unfrozen (an advance or a set still moves it, and applies what fell due); with "merchant_id", that merchant\'s clock only',
    answer: moved,
    problems: whose,
  },
  {
    method: "post",
    path: "/__sandbox/clock/unfreeze",
    operationId: "unfreezeClock",
    form: "/__sandbox/ui/clock/unfreeze",
    scope: "own",
    body: clockWhoseBody,
    summary: 'a frozen clock runs on from the moment it stood at; with "merchant_id", that merchant\'s clock only',
    answer: moved,
    problems: whose,
  },
] as const satisfies readonly OperatorCall[];

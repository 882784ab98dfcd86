// Operator calls: the merchant portal's actions, each the merchant's own gateway request.
import { z } from "zod";
import { MALFORMED } from "../operator-call.js";
import { cancelBody, captureBody, refundBody, reviewBody } from "../operator-bodies.js";

const s = z.string();

/** The merchant portal's actions (admin/portal.ts), each by the operationId of its call: declared here once. */
export const PORTAL_CALLS = { capture: "capturePayment", cancel: "cancelPayment", refund: "refundPayment", review: "reviewPayment" } as const;
export type PortalAction = keyof typeof PORTAL_CALLS;

/** The merchant portal's answer: the gateway's result for the one order, and the payment as it is now. */
const portalAnswer = z.strictObject({
  action: z.enum(Object.keys(PORTAL_CALLS) as [PortalAction, ...PortalAction[]]),
  request_id: s.describe(
    "the merchant's request the action was (its X-Request-Id): GET /__sandbox/requests and the payment's history name it; a refusal (409) carries it too",
  ),
  result: z.record(s, s).describe("the order's result as the gateway's batch answer has it (capture_status, refund_reference, ...)"),
  transaction: z.strictObject({ transaction_id: s, merchant_id: s, order_no: s, state: s, amount: s, captured_amount: s, refunded_amount: s, currency: s }),
});

/**
 * The merchant portal: capture, cancel, refund and review one payment as its merchant would by hand,
 * each the merchant's own gateway request attributed "portal" (admin/portal.ts). "own" scope: the
 * gateway's core opens the merchant's unit itself.
 */
export function portalCalls() {
  const call = <A extends PortalAction, B extends z.ZodType>(action: A, body: B, summary: string) =>
    ({
      method: "post",
      path: `/__sandbox/payments/{transaction_id}/${action}` as `/__sandbox/payments/{transaction_id}/${A}`,
      operationId: PORTAL_CALLS[action],
      form: `/__sandbox/ui/payments/{transaction_id}/${action}` as `/__sandbox/ui/payments/{transaction_id}/${A}`,
      scope: "own",
      body,
      summary,
      answer: portalAnswer,
      problems: {
        400: `invalid_field: amount or reason not text, decision not approve or reject; ${MALFORMED}`,
        404: "transaction_not_found",
        409: "refused: the gateway's own message (the payment's state or amounts forbid it, or a scenario rule refused it), and the request_id of the merchant's request",
      },
    }) as const;
  return [
    call("capture", captureBody, 'captures an authorised payment as its merchant\'s /v1/capture would: all of it, or {"amount":"30.00"}'),
    call("cancel", cancelBody, "cancels a payment before capture as its merchant's /v1/cancel would"),
    call("refund", refundBody, 'refunds a captured payment as its merchant\'s /v1/refund would: all that is left, or {"amount":"10.00","reason":"…"}'),
    call("review", reviewBody, 'approves or rejects a payment held for review as its merchant\'s /v1/review would: {"decision":"approve"|"reject"}'),
  ];
}

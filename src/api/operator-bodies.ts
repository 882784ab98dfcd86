// The operator API's request bodies as zod schemas: the table of calls (operator-calls.ts) names
// each call's, the router checks bodies with them (admin/accepts-only.ts), the actions and the
// dashboard's forms read their input with them, and the OpenAPI document describes them. Each keeps
// the error code its call answered before (invalid_name, invalid_advance, ...). Every body is
// strict: a key a call does not know is refused (a misspelt `merchantId` must not turn "reset this
// merchant" into "reset everything"), and so is any body sent to a call that takes none.
import { z } from "zod";

/** POST /__sandbox/scenarios: a scenario's text, YAML or JSON, as a scenario file holds it */
export const scenarioSourceBody = z.strictObject({
  source: z.string().max(65_536).describe("the scenario as a file holds it (YAML or JSON): name, description, extends, rules"),
});

/** POST /__sandbox/scenarios/check: the text, and a request to try it with */
export const scenarioCheckBody = z.strictObject({
  source: scenarioSourceBody.shape.source,
  sample: z
    .strictObject({
      operation: z.string().min(1).describe("authorise, capture, refund, payout, apm, recurring, ..."),
      fields: z.record(z.string(), z.unknown()).default({}).describe("the request's fields, as the merchant sends them"),
      nth: z.number().int().min(1).optional().describe("the nth call for its order_no (default 1)"),
    })
    .optional()
    .describe("which rule answers this request?"),
});

/** PUT /__sandbox/scenarios/global and /scenarios/bindings/{merchantId} */
export const scenarioNameBody = z.strictObject({ name: z.string().describe("a scenario's name (GET /__sandbox/scenarios lists them)") });

const merchantClock = z.string().min(1).optional().describe("this merchant's clock only (default: the sandbox's, every merchant's)");

/** POST /__sandbox/clock: one of the two */
export const clockBody = z.strictObject({
  advance: z.string().optional().describe("how far: 90s, 15m, 2h, 3d, 1w"),
  advance_seconds: z.union([z.number(), z.string()]).optional().describe("how far, in seconds"),
  merchant_id: merchantClock,
});

/** POST /__sandbox/clock/set */
export const clockSetBody = z.strictObject({
  to: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/, "a moment in ISO 8601 with its zone: 2027-01-01T00:00:00Z")
    .describe("the moment the clock reads from now on: later than its time (a clock only moves forward)"),
  merchant_id: merchantClock,
});

/** POST /__sandbox/clock/freeze and /clock/unfreeze */
export const clockWhoseBody = z.strictObject({ merchant_id: merchantClock });

/** POST /__sandbox/reset: one merchant's records, or everything; nothing else (an empty body resets nothing) */
export const resetBody = z.union([
  z.strictObject({ merchant_id: z.string().min(1).describe("a merchant Sandgate knows (a fixture, or one provisioned by use)") }),
  z.strictObject({ all: z.literal(true).describe("every merchant, back to the fixtures") }),
]);

/** POST /__sandbox/payments/{transaction_id}/complete */
export const completeBody = z.strictObject({
  outcome: z.string().describe("an outcome of the page the payment waits at: paid, failed, cancelled, threeds_passed, ..."),
});

/** POST /__sandbox/refunds/{ref}/settle */
export const settleBody = z.strictObject({ result: z.enum(["processed", "failed"]).default("processed") });

/** POST /__sandbox/payouts/{transaction_id}/fail */
export const failPayoutBody = z.strictObject({
  failure_type: z.string().optional().describe("a failure type of the catalogue (default UNKNOWN)"),
  failure_reason: z.string().optional().describe("default: the catalogue's text for the type"),
});

// the pattern says it in the OpenAPI document too; URL.canParse catches the rest
const httpUrl = z
  .string()
  .regex(/^https?:\/\/\S+$/i, "must be an http or https URL")
  .refine((s) => URL.canParse(s), "must be an http or https URL");

/** POST /__sandbox/notifications/trigger: a test notification to any URL */
/** sandgate listen's report of one attempt (notify/listeners.ts ListenReport) */
export const listenAnswerBody = z.strictObject({
  offer: z.string().min(1).max(200).describe("the attempt's id, <notification_id>.<attempt>"),
  http_status: z.number().int().min(100).max(599).nullable().describe("the receiver's status; null when no HTTP answer came"),
  error: z.string().max(2000).default(""),
  duration_ms: z.number().min(0).max(3_600_000).default(0),
  response_body: z.string().max(100_000).default(""),
  code: z
    .string()
    .regex(/^[A-Za-z_]{1,40}$/)
    .optional()
    .describe(
      "with no HTTP answer, why, as a system code (ECONNREFUSED, ENOTFOUND, timeout): a receiver check stops on one that says the receiver is unreachable",
    ),
});

export const triggerBody = z.strictObject({
  merchant_id: z.string().min(1),
  url: httpUrl,
  event: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,100}$/, "letters, digits and _ . : - only (at most 100)")
    .default("test.notification"),
  data: z.record(z.string(), z.unknown()).default({}),
  notify: z
    .object({
      delay_seconds: z
        .number()
        .min(0)
        .max(30 * 86_400)
        .optional(),
      duplicate: z.number().int().min(0).max(10).optional(),
      drop: z.boolean().optional(),
    })
    .strict()
    .optional(),
});

/** POST /__sandbox/receiver-checks: a conformance check of a merchant's notification receiver (src/receiver-check) */
export const receiverCheckBody = z.strictObject({
  url: z.string().min(1).describe("the receiver's URL (http or https, not this Sandgate): the only address contacted"),
  merchant_id: z.string().min(1).describe("a merchant of the fixtures, or one already provisioned"),
  transaction_id: z.string().min(1).optional().describe("a payment of the merchant to notify about (default: one made for the check)"),
  key: z.string().min(1).optional().describe("the key to sign with (default: the merchant's key in Sandgate)"),
});

/** PUT /__sandbox/snapshots/{name}: everything, or one merchant's records */
/** POST /__sandbox/snapshots/{name}/restore: a snapshot of every merchant replaces every merchant's records, so it says so */
export const restoreBody = z.strictObject({
  all: z.literal(true).optional().describe("needed when the snapshot holds every merchant: it replaces every merchant's records and the clock"),
});

export const snapshotBody = z.strictObject({
  merchant_id: z.string().min(1).optional().describe("keep this merchant's records only (default: every merchant's)"),
});

// The merchant portal's actions (admin/portal.ts): the gateway checks what they ask as it checks a merchant's request
const portalAmount = (what: string) => z.string().min(1).optional().describe(what);
/** POST /__sandbox/payments/{transaction_id}/capture */
export const captureBody = z.strictObject({ amount: portalAmount("what to capture, at most the payment's amount (default: all of it)") });
/** POST /__sandbox/payments/{transaction_id}/cancel */
export const cancelBody = z.strictObject({});
/** POST /__sandbox/payments/{transaction_id}/refund */
export const refundBody = z.strictObject({
  amount: portalAmount("what to refund (default: all that is left)"),
  reason: z.string().max(256).optional().describe("the refund's reason"),
});
/** POST /__sandbox/payments/{transaction_id}/review */
export const reviewBody = z.strictObject({ decision: z.enum(["approve", "reject"]).describe("approve or reject the payment held for review") });

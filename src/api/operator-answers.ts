// What the operator API's calls answer, as zod schemas (the routes in src/admin and src/pages send
// these shapes; test/openapi.test.ts validates real answers against the document made from them).
// The table of calls that answer them is operator-calls.ts.
import { z } from "zod";
import * as stored from "../store/fixtures/fixtures.js";
import { payoutAnswer } from "./answers.js";

const s = z.string();
export const int = z.number().int();

/** Every operator error: `{ error, message }` (a few add what they are about, e.g. a payment's state). */
export const operatorError = z.looseObject({ error: s.describe("what went wrong, e.g. transaction_not_found"), message: s.describe("in words, for a person") });

export const merchantView = z.strictObject({
  merchant_id: s,
  name: s,
  secret_key: s.describe("the key requests and answers are signed with"),
  provisioned: z.boolean().describe("made on first use (or by PUT), not a fixture"),
  accounts: z.array(z.strictObject({ account_id: s, capture_mode: z.enum(["manual", "auto"]) })),
});
export const health = z.strictObject({
  status: z.literal("ok"),
  scenario: s.describe("the global scenario"),
  signature_mode: z.enum(["lenient", "strict"]),
  time: s.describe("the sandbox clock, ISO 8601"),
});
export const document = z.looseObject({ openapi: s, info: z.looseObject({ title: s, version: s }), paths: z.record(s, z.looseObject({})) });

export const requestLogEntry = z.looseObject({
  id: s,
  at: s,
  operation: s,
  path: s,
  ip: s,
  merchant_id: s,
  account_id: s,
  order_no: s.describe("the order the request names; a batch's first order"),
  order_nos: z.array(s).optional().describe("a batch naming more than one order: each (the first 50); ?order_no= finds the request by any of them"),
  http_status: int,
  result: s.describe("<code>:<text>"),
  rule: s.describe("the scenario rule that decided the answer"),
  note: s.optional(),
  signature: z.looseObject({}).nullable().describe("the signature check: what was sent and what was expected"),
});
export const har = z.looseObject({
  log: z.looseObject({
    version: s,
    creator: z.looseObject({ name: s, version: s }),
    entries: z.array(z.looseObject({ startedDateTime: s, request: z.looseObject({ method: s, url: s }), response: z.looseObject({ status: int }) })),
  }),
});
export const verifyReport = z.looseObject({
  target: s,
  exchanges: z.array(z.looseObject({})),
  notifications: z.looseObject({ recorded: int, sent: int, compared: z.boolean() }),
  differences: z.array(z.looseObject({})),
  suggestions: z.looseObject({}).optional().describe("with suggest=1"),
});
export const coverage = z.looseObject({
  merchant_id: s.nullable(),
  scope: z
    .strictObject({ operations: z.array(s).nullable(), scenario: s.nullable() })
    .describe("what was counted (null: every operation, the scenarios that answered)"),
  scenarios: z.array(z.looseObject({ name: s, rules: z.array(z.looseObject({ rule: s, answers: int })) })),
  operations: z.array(z.looseObject({ operation: s, produced: z.record(s, int), never: z.array(s) })),
});
export const clock = z.strictObject({
  now: s,
  offset_ms: z.number(),
  frozen: z.boolean().describe("it stands still (frozen, or a merchant's over the frozen sandbox clock)"),
  merchant_id: s.optional(),
});
export const snapshotInfo = z.strictObject({
  name: s,
  merchant: s.nullable().describe("the one merchant it holds, or null: every merchant"),
  saved_at: s.describe("the sandbox clock when it was saved"),
  records: int,
});

const historyEntry = z.looseObject({
  at: s,
  event: s,
  payment_status: s,
  result: s,
  rule: s,
  source: z.enum(["api", "portal", "playground", "payer", "operator", "clock"]),
});
/**
 * A stored record as the operator API shows it: the fields named, each as the store's schema has it
 * (the one the fixtures are checked against: src/store/fixtures/fixtures.ts), any others allowed.
 */
function recordView(record: z.ZodObject, fields: string[], notes: Record<string, string> = {}) {
  return z.looseObject(Object.fromEntries(fields.map((f) => [f, notes[f] ? record.shape[f]!.describe(notes[f]) : record.shape[f]!])));
}
export const transaction = recordView(
  stored.transaction,
  [
    "transaction_id",
    "merchant_id",
    "account_id",
    "order_no",
    "kind",
    "currency",
    "amount",
    "state",
    "result",
    "card_masked",
    "payment_method",
    "page_id",
    "recurring_id",
    "captured_amount",
    "refunded_amount",
    "created_at",
    "updated_at",
  ],
  {
    amount: "decimal, two places",
    result: "the result's key in the catalogue (success, do_not_honor, ...)",
    card_masked: "first six and last four",
    page_id: "the payer page's id, when there is one",
  },
).extend({ history: z.array(historyEntry).optional().describe("every request and state change, oldest first") });
export const refund = recordView(
  stored.refund,
  [
    "refund_reference_id",
    "refund_reference",
    "transaction_id",
    "merchant_id",
    "account_id",
    "order_no",
    "currency",
    "amount",
    "refund_amount",
    "refund_reason",
    "state",
    "refund_date",
    "refund_processing_date",
    "due_at",
  ],
  { due_at: "when an accepted refund settles" },
);
export const payoutView = payoutAnswer.omit({ encryption_data: true }).extend({
  sandbox: z
    .strictObject({ rule: s, due_at: s, next_status: z.enum(["", "COMPLETED", "FAILED"]), next_failure_type: s })
    .describe("what only the sandbox knows: the deciding rule and what happens next"),
});
export const subscription = recordView(stored.subscription, [
  "recurring_id",
  "merchant_id",
  "account_id",
  "order_no",
  "transaction_id",
  "contract_amount",
  "currency",
  "state",
  "deductions",
  "next_deduction_at",
  "created_at",
]).extend({
  recurring_status: s.describe("the gateway's recurring_status code"),
});
export const charged = z.strictObject({ transaction_id: s, order_no: s, amount: s, currency: s, payment_status: s, result: s, created_at: s });
const attempt = z.looseObject({
  attempt: int,
  at: s,
  reason: z.enum(["first", "retry", "duplicate", "resend"]),
  http_status: int.nullable().describe("null when no HTTP answer came"),
  error: s,
  duration_ms: z.number(),
  response_body: s,
  via: z.literal("listen").optional().describe("listen: delivered through sandgate listen, the answer its receiver gave"),
});
export const notification = z.looseObject({
  notification_id: s,
  merchant_id: s,
  url: s,
  event: s,
  payload: z.looseObject({ notification_id: s, event: s, merchant_id: s, created_at: s, data: z.record(s, z.unknown()), encryption_data: s }),
  created_at: s,
  due_at: s,
  state: z.enum(["pending", "delivered", "failed", "dropped"]),
  attempts: z.array(attempt),
  error: s,
  check: s.optional().describe("the receiver check that sent it"),
});
export const receiverCheckReport = z.looseObject({
  check: s,
  url: s,
  merchant_id: s,
  transaction_id: s,
  payment: z.enum(["created", "given"]),
  started_at: s,
  duration_ms: z.number(),
  probes: z.array(z.looseObject({})),
  stopped: s,
  not_run: z.array(s),
  summary: z.looseObject({ pass: int, warning: int, fail: int, not_run: int }),
  passed: z.boolean(),
});
export const scenarioList = z.strictObject({
  global: s,
  bindings: z.record(s, s).describe("merchant_id → scenario"),
  scenarios: z.array(z.strictObject({ name: s, description: s, extends: z.array(s), rules: int })),
  errors: z.array(s).describe("scenario files that could not be read"),
});
export const scenario = z.looseObject({ name: s, description: s, extends: z.array(s), rules: z.array(z.looseObject({})) });
export const reloaded = z.strictObject({ errors: z.array(s), scenarios: z.array(s) });
/** Where a payment stands after its payer (or an operator) acted. */
const payerResult = {
  transaction_id: s,
  order_status: s,
  result_info: s,
  return_url: s.describe("the merchant's return_url with the signed result, or empty"),
};
export const completed = z.strictObject({
  ...payerResult,
  payment_status: s,
  stage: s.describe("the page the payment now waits at (3ds after a checkout chose it), or empty once finished"),
});

/** What a payer page answers a script that sends Accept: application/json. */
export const payerPageResult = z.strictObject({ ...payerResult, next_url: s.optional().describe("the page the payment waits at next (3-D Secure)") });
export const payerPageRefusal = z.looseObject({
  error: s.describe("page_not_found, invalid_outcome, invalid_card, form_refused"),
  message: s,
  allowed: z.array(s).optional().describe("the outcomes this page offers"),
  problems: z
    .array(z.strictObject({ field: s, message: s }))
    .optional()
    .describe("the card form's errors"),
});
export const payerPageFinished = z.looseObject({ error: z.literal("payment_not_pending"), message: s, ...payerResult });

/** The body a payer page's forms send (or a script: form or JSON): one of outcome, challenge_code, the card form. */
export const payerPageBody = z.looseObject({
  outcome: s.optional().describe("an outcome the page offers (paid, failed, cancelled, threeds_passed, ...)"),
  challenge_code: s.optional().describe("the 3-D Secure page's code"),
  card: s.optional().describe("the hosted checkout's card form: number"),
  expiration_month: s.optional(),
  expiration_year: s.optional(),
  security_code: s.optional(),
  holder_name: s.optional(),
});

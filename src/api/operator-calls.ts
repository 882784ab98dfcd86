// The operator API (/__sandbox) and the payer pages (/pay) for the OpenAPI document: each call's
// operationId, query parameters, what it answers (zod schemas of what the routes in src/admin and
// src/pages send) and the refusals it really makes (the problem() calls of src/admin/*.ts, the
// ADMIN_TOKEN guard of src/dashboard/session.ts, the cross-site refusal of src/admin/cross-site.ts).
// test/openapi.test.ts validates real answers of these calls against the generated document.
import { z } from "zod";
import type { RouteScope } from "../store/store.js";
import {
  charged,
  clock,
  completed,
  coverage,
  document,
  har,
  health,
  int,
  merchantView,
  notification,
  payerResult,
  payoutView,
  receiverCheckReport,
  refund,
  reloaded,
  requestLogEntry,
  scenario,
  scenarioList,
  snapshotInfo,
  subscription,
  transaction,
  verifyReport,
} from "./operator-answers.js";
import {
  cancelBody,
  captureBody,
  clockBody,
  completeBody,
  failPayoutBody,
  receiverCheckBody,
  refundBody,
  resetBody,
  restoreBody,
  reviewBody,
  scenarioNameBody,
  settleBody,
  snapshotBody,
  triggerBody,
} from "./operator-bodies.js";

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
function portalCalls() {
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

type Method = "get" | "post" | "put" | "delete";

/** Which records a call's unit of work covers: see RouteScope. */
type CallScope = RouteScope;

export interface OperatorCall {
  method: Method;
  path: string;
  operationId: string;
  scope: CallScope;
  summary: string;
  /** query parameters: name → description */
  query?: Record<string, string>;
  /** what it answers (200, or `status`) */
  answer: z.ZodType;
  status?: number;
  /** a text media type it also answers with (a string) */
  text?: string;
  /** another status with the same shape as the answer (reload: 422 with the file errors) */
  alike?: [status: number, description: string];
  /** its own refusals by status: the error codes, in words; `schema` when the body says more than { error, message } */
  problems?: Record<number, string | { description: string; schema: z.ZodType }>;
  /** open: no ADMIN_TOKEN needed (health, this document) */
  open?: true;
  /**
   * The body: a JSON object this schema checks (a key it does not know is refused before the call
   * runs; malformed JSON is a 400 malformed_body), or "raw" (the call reads its own: verify's HAR,
   * an imported state file). None: a call
   * that changes something refuses any body with a key.
   */
  body?: z.ZodType | "raw";
  /**
   * The dashboard's form that makes this call (its /ui/ twin): posted form fields, answered with a
   * redirect back and a message; mounted by dashboard/dashboard.ts with the call's scope.
   */
  form?: string;
}

/** Runs outside a unit of work before its handler: answers no 503 store_unavailable before it starts. */
export const outsideUnits = (call: Pick<OperatorCall, "scope">) => call.scope === "none" || call.scope === "own";

const MALFORMED = "malformed_body (the body is not valid JSON)";

/**
 * The operator API, one entry per call: the one table the router (server/operator.ts: each call's
 * scope, body check and handler), the OpenAPI document, the typed client (client.ts call()) and
 * ctl's calls (ctl call <operationId>) are made from. Adding a call is an entry here and its handler.
 */
const OPERATOR = [
  {
    method: "get",
    path: "/__sandbox/health",
    operationId: "getHealth",
    scope: "none",
    summary: "200 once ready: status, scenario, signature_mode, time (open even with ADMIN_TOKEN)",
    answer: health,
    open: true,
  },
  {
    method: "get",
    path: "/__sandbox/openapi.json",
    operationId: "getOpenApiDocument",
    scope: "none",
    summary: "this document (open even with ADMIN_TOKEN)",
    answer: document,
    open: true,
  },
  {
    method: "get",
    path: "/__sandbox/requests",
    operationId: "listRequests",
    scope: "all",
    summary: "the request log, newest first",
    query: {
      merchant_id: "only this merchant's",
      order_no: "only this order's",
      operation: "only this operation's (authorise, capture, ...)",
      http_status: "an HTTP status (403) or a class (4xx)",
      since: "ISO date-time",
      until: "ISO date-time",
      limit: "at most this many (default 100, at most 5000)",
    },
    answer: z.strictObject({ requests: z.array(requestLogEntry) }),
    problems: { 400: "invalid_query: since or until is not an ISO date-time" },
  },
  {
    method: "get",
    path: "/__sandbox/requests.har",
    operationId: "exportRequestsHar",
    scope: "all",
    summary: "the request log as HAR 1.2 (same filters)",
    query: {
      merchant_id: "only this merchant's",
      order_no: "only this order's",
      operation: "only this operation's",
      http_status: "an HTTP status (403) or a class (4xx)",
      since: "ISO date-time",
      until: "ISO date-time",
      limit: "at most this many (default 100, at most 5000)",
    },
    answer: har,
    problems: { 400: "invalid_query: since or until is not an ISO date-time", 429: "busy: one export runs at a time per process, three wait (Retry-After)" },
  },
  {
    method: "post",
    path: "/__sandbox/verify",
    operationId: "verifyRecording",
    scope: "own",
    body: "raw",
    summary: "replays a recording (HAR 1.2, up to 20 MB) against a fresh Sandgate and answers verify's JSON report",
    query: {
      ignore: "a path left out of the comparison (repeatable, or comma-separated)",
      suggest: "1: suggest the scenario rules that close the differences",
    },
    answer: verifyReport,
    problems: {
      400: "invalid_har: the body is not a HAR of this gateway's API",
      413: "body_too_large: the HAR is larger than 20 MB; verify_out_of_memory: the replay needs more than its thread's 256 MB",
      429: "busy: one replay runs at a time per process, three wait (Retry-After)",
      500: "verify_failed: the fresh Sandgate could not replay it",
      504: "verify_timed_out: the replay took longer than 60 s",
    },
  },
  {
    method: "get",
    path: "/__sandbox/coverage",
    operationId: "getCoverage",
    scope: "all",
    summary: "rules that answered, outcomes never produced (format=markdown: the same as Markdown)",
    query: { merchant_id: "one merchant's (default: all)", format: "markdown: text/markdown instead of JSON" },
    answer: coverage,
    text: "text/markdown",
  },
  {
    method: "delete",
    path: "/__sandbox/coverage",
    operationId: "clearCoverage",
    scope: "all",
    summary: "clears the coverage (merchant_id, or all)",
    query: { merchant_id: "one merchant's (default: all)" },
    answer: z.strictObject({ cleared: s }),
  },
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
  {
    method: "get",
    path: "/__sandbox/transactions",
    operationId: "listTransactions",
    scope: "all",
    summary: "transactions with their history",
    query: { merchant_id: "only this merchant's", order_no: "only this order's" },
    answer: z.strictObject({ transactions: z.array(transaction) }),
  },
  {
    method: "get",
    path: "/__sandbox/refunds",
    operationId: "listRefunds",
    scope: "all",
    summary: "refunds",
    query: { merchant_id: "only this merchant's", transaction_id: "only this payment's" },
    answer: z.strictObject({ refunds: z.array(refund) }),
  },
  {
    method: "post",
    path: "/__sandbox/refunds/{ref}/settle",
    operationId: "settleRefund",
    form: "/__sandbox/ui/refunds/{ref}/settle",
    scope: { record: "refund", param: "ref" },
    body: settleBody,
    summary: 'settles an accepted refund now: {"result":"processed"|"failed"}',
    answer: z.strictObject({ refund }),

    problems: {
      400: `invalid_result: result is not processed or failed; ${MALFORMED}`,
      404: "refund_not_found",
      409: "refund_settled: the refund is no longer accepted",
    },
  },
  {
    method: "post",
    path: "/__sandbox/payments/{transaction_id}/complete",
    operationId: "completePayment",
    form: "/__sandbox/ui/payments/{transaction_id}/complete",
    scope: { record: "transaction", param: "transaction_id" },
    body: completeBody,
    summary: 'finishes a payment waiting for its payer, as the payer would: {"outcome":"paid"|...}',
    answer: completed,

    problems: {
      400: `invalid_outcome: not an outcome of the page the payment waits at; ${MALFORMED}`,
      404: "transaction_not_found",
      409: {
        description: "payment_not_pending: the payment is no longer pending (the answer says where it stands)",
        schema: z.looseObject({ error: s, message: s, ...completed.shape }),
      },
    },
  },
  ...portalCalls(),
  {
    method: "get",
    path: "/__sandbox/payouts",
    operationId: "listPayouts",
    scope: "all",
    summary: "payouts as merchants see them, and what the sandbox does next",
    query: { merchant_id: "only this merchant's", status: "PENDING, COMPLETED or FAILED", request_id: "only this request's" },
    answer: z.strictObject({ payouts: z.array(payoutView) }),
  },
  {
    method: "post",
    path: "/__sandbox/payouts/{transaction_id}/complete",
    operationId: "completePayout",
    form: "/__sandbox/ui/payouts/{transaction_id}/complete",
    scope: { record: "payout", param: "transaction_id" },
    summary: "completes a pending payout",
    answer: z.strictObject({ payout: payoutView }),
    problems: { 404: "payout_not_found", 409: "payout_final: only PENDING payouts move" },
  },
  {
    method: "post",
    path: "/__sandbox/payouts/{transaction_id}/fail",
    operationId: "failPayout",
    form: "/__sandbox/ui/payouts/{transaction_id}/fail",
    scope: { record: "payout", param: "transaction_id" },
    body: failPayoutBody,
    summary: "fails a pending payout: {failure_type, failure_reason}",
    answer: z.strictObject({ payout: payoutView }),

    problems: { 400: `invalid_failure_type, invalid_failure_reason; ${MALFORMED}`, 404: "payout_not_found", 409: "payout_final: only PENDING payouts move" },
  },
  {
    method: "get",
    path: "/__sandbox/subscriptions",
    operationId: "listSubscriptions",
    scope: "all",
    summary: "subscriptions with the payments they charged",
    query: { merchant_id: "only this merchant's", recurring_id: "only this subscription" },
    answer: z.strictObject({ subscriptions: z.array(subscription.extend({ transactions: z.array(charged) })) }),
  },
  {
    method: "get",
    path: "/__sandbox/merchants/{merchant_id}",
    operationId: "getMerchant",
    scope: { merchant: "merchant_id" },
    summary: "a merchant Sandgate knows, with its secret key",
    answer: z.strictObject({ merchant: merchantView }),
    problems: { 404: "merchant_not_found" },
  },
  {
    method: "put",
    path: "/__sandbox/merchants/{merchant_id}",
    operationId: "provisionMerchant",
    scope: { merchant: "merchant_id" },
    summary: "the merchant with its secret key, provisioned now if Sandgate does not know it (with --merchant-keys random its key is random)",
    answer: z.strictObject({ merchant: merchantView, created: z.boolean().describe("provisioned by this call") }),
    problems: { 400: "invalid_merchant_id", 404: "merchant_not_found: --strict-merchants is on" },
  },
  {
    method: "post",
    path: "/__sandbox/merchants/{merchant_id}/rotate-key",
    operationId: "rotateMerchantKey",
    scope: { merchant: "merchant_id" },
    summary: "gives a merchant a new random secret key (--merchant-keys random): the old one is refused from the next request on",
    answer: z.strictObject({ merchant: merchantView }),
    problems: { 404: "merchant_not_found", 409: "keys_not_random: with --merchant-keys id a provisioned merchant's key is sk_test_<id>" },
  },
  {
    method: "post",
    path: "/__sandbox/subscriptions/{recurring_id}/charge",
    operationId: "chargeSubscription",
    form: "/__sandbox/ui/subscriptions/{recurring_id}/charge",
    scope: { record: "subscription", param: "recurring_id" },
    summary: "charges the next deduction now",
    answer: z.strictObject({ subscription }),
    problems: { 404: "subscription_not_found", 409: "subscription_not_active: nothing left to charge" },
  },
  {
    method: "get",
    path: "/__sandbox/notifications",
    operationId: "listNotifications",
    scope: "all",
    summary: "the notification outbox with every attempt",
    query: {
      merchant_id: "only this merchant's",
      event: "only this event's",
      state: "pending, delivered, failed or dropped",
      check: "only this receiver check's (its id)",
    },
    answer: z.strictObject({ notifications: z.array(notification) }),
    problems: { 400: "invalid_state: state is not pending, delivered, failed or dropped" },
  },
  {
    method: "get",
    path: "/__sandbox/notifications/{id}",
    operationId: "getNotification",
    scope: { record: "notification", param: "id" },
    summary: "one notification with every attempt",
    answer: z.strictObject({ notification }),
    problems: { 404: "notification_not_found" },
  },
  {
    method: "post",
    path: "/__sandbox/notifications/deliver",
    operationId: "deliverNotifications",
    scope: "own",
    summary: "attempts every notification due now, and waits for the receivers",
    answer: z.strictObject({ attempts: int, pending: int, delivered: int, failed: int, dropped: int }),
  },
  {
    method: "post",
    path: "/__sandbox/notifications/{id}/resend",
    operationId: "resendNotification",
    form: "/__sandbox/ui/notifications/{id}/resend",
    scope: "own",
    summary: "sends a notification again",
    answer: z.strictObject({ notification }),
    problems: { 404: "notification_not_found" },
  },
  {
    method: "post",
    path: "/__sandbox/notifications/trigger",
    operationId: "triggerNotification",
    scope: "own",
    body: triggerBody,
    summary: "a test notification to any URL (merchant_id, url, event, data, notify)",
    answer: z.strictObject({ notification }),
    status: 201,

    problems: { 400: `invalid_trigger: a field is missing or wrong (each named); ${MALFORMED}`, 404: "merchant_not_found (with --strict-merchants)" },
  },
  {
    method: "post",
    path: "/__sandbox/receiver-checks",
    operationId: "checkReceiver",
    scope: "own",
    body: receiverCheckBody,
    summary: "checks a merchant's notification receiver with signed, tampered and malformed notifications; answers the report",
    answer: receiverCheckReport,

    problems: {
      400: `invalid_check, invalid_url, unknown_merchant, invalid_key, transaction_not_found; ${MALFORMED}`,
      429: "busy: two checks run at a time per process, four wait (Retry-After)",
      500: "payment_not_created, check_failed: the check could not run",
    },
  },
  {
    method: "get",
    path: "/__sandbox/scenarios",
    operationId: "listScenarios",
    scope: "all",
    summary: "scenarios, the global one, bindings, file errors",
    answer: scenarioList,
  },
  {
    method: "get",
    path: "/__sandbox/scenarios/{name}",
    operationId: "getScenario",
    scope: "all",
    summary: "one scenario with its rules",
    answer: scenario,
    problems: { 404: "unknown_scenario" },
  },
  {
    method: "put",
    path: "/__sandbox/scenarios/global",
    operationId: "setGlobalScenario",
    form: "/__sandbox/ui/scenarios/global",
    scope: "all",
    body: scenarioNameBody,
    summary: 'the global scenario: {"name":"declines"}',
    answer: z.strictObject({ global: s }),

    problems: { 400: `invalid_name: no name; ${MALFORMED}`, 404: "unknown_scenario" },
  },
  {
    method: "put",
    path: "/__sandbox/scenarios/bindings/{merchantId}",
    operationId: "bindScenario",
    form: "/__sandbox/ui/scenarios/bind",
    scope: "all",
    body: scenarioNameBody,
    summary: 'one merchant\'s scenario: {"name":"3ds"}',
    answer: z.strictObject({ merchant_id: s, scenario: s }),

    problems: { 400: `invalid_name: no name; ${MALFORMED}`, 404: "unknown_scenario" },
  },
  {
    method: "delete",
    path: "/__sandbox/scenarios/bindings/{merchantId}",
    operationId: "unbindScenario",
    form: "/__sandbox/ui/scenarios/unbind",
    scope: "all",
    summary: "removes a merchant's binding",
    answer: z.strictObject({ merchant_id: s, scenario: s.describe("the global scenario, which applies now") }),
    problems: { 404: "not_bound" },
  },
  {
    method: "post",
    path: "/__sandbox/scenarios/reload",
    operationId: "reloadScenarios",
    scope: "all",
    summary: "reads the scenario files again",
    answer: reloaded,
    alike: [422, "a scenario file could not be read (errors says which; the others are loaded)"],
  },
  {
    method: "get",
    path: "/__sandbox/state",
    operationId: "exportState",
    scope: "all",
    summary: "the state as a file to move or keep: NDJSON, versioned, one line per record (docs/state.md); merchant_id: one merchant's",
    query: { merchant_id: "one merchant's records only (default: every merchant's)" },
    answer: z.string().describe("the state file"),
    text: "application/x-ndjson",
    problems: { 404: "merchant_not_found" },
  },
  {
    method: "put",
    path: "/__sandbox/state",
    operationId: "importState",
    scope: "all",
    summary:
      "replaces the state with a file GET /__sandbox/state wrote: the one merchant the file holds, or, with all=true, every merchant and the clock; nothing changes when the file is refused",
    query: { all: "true: needed when the file holds every merchant (it replaces every merchant's records and the clock)" },
    answer: z.strictObject({
      merchant: s.nullable().describe("the merchant the file held, or null: everything was replaced"),
      records: z.record(s, int).describe("records imported, per collection"),
    }),
    body: "raw",
    problems: {
      400: "invalid_state_file: not a state file, another version, cut short, or a record that is not one (the line and the reason); all_required: the file holds every merchant and all=true was not given",
      413: "body_too_large: the file is larger than 64 MB",
    },
  },
  {
    method: "get",
    path: "/__sandbox/snapshots",
    operationId: "listSnapshots",
    scope: "none",
    summary: "the QA snapshots kept, newest first",
    answer: z.strictObject({ snapshots: z.array(snapshotInfo) }),
  },
  {
    method: "put",
    path: "/__sandbox/snapshots/{name}",
    operationId: "saveSnapshot",
    scope: "all",
    form: "/__sandbox/ui/snapshots",
    summary: 'keeps the state (or one merchant\'s: {"merchant_id":"M1"}) under a name, replacing one of the same name',
    answer: z.strictObject({ snapshot: snapshotInfo }),
    body: snapshotBody,
    problems: { 400: `invalid_name: 1 to 64 letters, digits, _ . -; ${MALFORMED}`, 404: "merchant_not_found" },
  },
  {
    method: "post",
    path: "/__sandbox/snapshots/{name}/restore",
    operationId: "restoreSnapshot",
    scope: "all",
    form: "/__sandbox/ui/snapshots/{name}/restore",
    summary: 'puts the state kept under that name back: the one merchant it holds, or, with {"all":true}, every merchant and the clock',
    answer: z.strictObject({ snapshot: snapshotInfo }),
    body: restoreBody,
    problems: { 400: `all_required: the snapshot holds every merchant and the body did not say {"all":true}; ${MALFORMED}`, 404: "snapshot_not_found" },
  },
  {
    method: "delete",
    path: "/__sandbox/snapshots/{name}",
    operationId: "deleteSnapshot",
    scope: "none",
    form: "/__sandbox/ui/snapshots/{name}/delete",
    summary: "forgets a snapshot",
    answer: z.strictObject({ deleted: s }),
    problems: { 404: "snapshot_not_found" },
  },
  {
    method: "post",
    path: "/__sandbox/reset",
    operationId: "resetState",
    form: "/__sandbox/ui/reset",
    scope: "all",
    body: resetBody,
    summary: 'back to the fixtures: {} for all, {"merchant_id":"M1"} for one',
    answer: z.strictObject({ reset: s.describe('the merchant, or "all"') }),

    problems: { 400: `invalid_merchant_id: merchant_id is not a string; ${MALFORMED}` },
  },
] as const satisfies readonly OperatorCall[];

/** The table's entries, each with its own literal types (the typed client's calls are made from them). */
export type OperatorEntry = (typeof OPERATOR)[number];
/** An operator call's operationId: the key of its handler, its client call and its ctl call. */
export type OperatorCallId = OperatorEntry["operationId"];

/** The table as plain entries, for whatever goes through every call. */
export const OPERATOR_CALLS: readonly (OperatorCall & { operationId: OperatorCallId })[] = OPERATOR;

const BY_ID = new Map(OPERATOR_CALLS.map((c) => [c.operationId, c]));
/** A call's table entry by its operationId. */
export const operatorCall = (id: OperatorCallId) => BY_ID.get(id)!;

/** The names in a path's braces: "/payments/{transaction_id}/complete" → "transaction_id". */
export type ParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}` ? N | ParamNames<Rest> : never;
type CallOf<Id extends OperatorCallId> = Extract<OperatorEntry, { operationId: Id }>;
type FormCallId = Extract<OperatorEntry, { form: string }>["operationId"];

const filled = (path: string, params: Record<string, string | undefined>) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));

/** A call's path with its parameters put in (encoded): callPath("listNotifications") is /__sandbox/notifications. */
export const callPath = <Id extends OperatorCallId>(id: Id, params: Partial<Record<ParamNames<CallOf<Id>["path"]>, string>> = {}): string =>
  filled(operatorCall(id).path, params as Record<string, string>);

/** The dashboard's form (the /ui/ twin) of a call, its parameters put in: what a page's <form action> posts to. */
export const formPath = <Id extends FormCallId>(
  id: Id,
  params: Partial<Record<ParamNames<Extract<CallOf<Id>, { form: string }>["form"]>, string>> = {},
): string => filled(operatorCall(id).form!, params as Record<string, string>);

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

// Operator calls: What the sandbox saw and answered: health, this document, the request log, its HAR and its verification, scenario coverage.
// Entries of the one table (src/api/operator-calls.ts); see OperatorCall for what each field means.
import { z } from "zod";
import type { OperatorCall } from "../operator-call.js";
import { coverage, document, har, health, requestLogEntry, verifyReport } from "../operator-answers.js";

const s = z.string();

export const REQUEST_CALLS = [
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
    query: {
      merchant_id: "one merchant's (default: all)",
      operations: 'the rules of these operations only, a comma list (authorise,capture,refund), or "used": those the merchant\'s requests were decided for',
      scenario: "that scenario's rules only, answered or not (default: the scenarios that answered)",
      format: "markdown: text/markdown instead of JSON",
    },
    answer: coverage,
    text: "text/markdown",
    problems: { 400: "invalid_scope: an unknown operation or scenario" },
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
] as const satisfies readonly OperatorCall[];

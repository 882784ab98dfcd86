// GET /__sandbox/openapi.json: OpenAPI 3.1 of every /v1 operation and of the operator API. Request
// bodies (JSON and form encodings) come from the zod schema each operation validates with; answers
// (XML, JSON, HTML) and refusals from src/openapi/answers.ts; the operator API's bodies from the zod
// schemas its calls read them with (src/admin/bodies.ts). Built once, on first request.
import { z } from "zod";
import type { Operation } from "../http/operation.js";
import { ANSWERS, jsonRefusal, xmlRefusal } from "./answers.js";
import { OPERATOR_BODIES } from "../admin/bodies.js";
import { OUTCOME_HEADER, operationOutcomes } from "../scenarios/outcome-header.js";

type Json = Record<string, unknown>;

/** A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect), without its own $schema line. */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as Json;
  return rest;
}

const MEDIA = { xml: "application/xml", json: "application/json", html: "text/html" } as const;
const REFUSALS: [string, string][] = [
  ["400", "a refused request: missing or bad fields, signature, body (each field named), an unknown X-Sandbox-Scenario or X-Sandbox-Outcome"],
  ["401", "the signature does not match (strict mode)"],
  ["403", "the caller's address is not registered (query operations)"],
  ["404", "unknown merchant, account or token (with --strict-merchants)"],
  ["413", "body larger than --body-limit"],
  ["500", "a scenario rule's status, or an internal error"],
  ["503", "a scenario rule's status, or I0050 when the shared store (--redis-url) cannot be reached"],
];

/** The sandbox's request headers an operation takes: a scenario for every one, an outcome for those that have outcomes. */
function sandboxHeaders(op: Operation): Json[] {
  const scenario = { name: "X-Sandbox-Scenario", in: "header", required: false, description: "the scenario deciding this request (stronger than the merchant's and the global one)", schema: { type: "string" } };
  const outcomes = operationOutcomes(op.name);
  if (outcomes.length === 0) return [scenario];
  const description = "the outcome this request ends with (data/outcomes.json; for a batch, every order), stronger than any scenario";
  return [scenario, { name: OUTCOME_HEADER, in: "header", required: false, description, schema: { type: "string", enum: outcomes } }];
}

function operationPaths(operations: readonly Operation[]): Json {
  const paths: Json = {};
  for (const op of operations) {
    const media = MEDIA[op.format];
    const body = jsonSchema(op.request, "input");
    const refusal = op.format === "html" ? { type: "string" } : jsonSchema(op.format === "xml" ? xmlRefusal : jsonRefusal, "output");
    const answer = op.format === "html" ? { type: "string", description: "the gateway's loading page (form theForm, posted to the hosted checkout)" } : jsonSchema(ANSWERS[op.name]!, "output");
    const content = (schema: Json) => ({ [media]: { schema: op.format === "xml" ? { ...schema, xml: { name: "respon" } } : schema } });
    paths[op.path] = {
      post: {
        operationId: op.name,
        tags: ["gateway"],
        summary: `${op.name}${op.registeredIpOnly ? " (from the merchant's registered IPs only)" : ""}`,
        parameters: sandboxHeaders(op),
        requestBody: {
          required: true,
          content: {
            "application/json": { schema: body },
            // a form carries the same fields; nested objects and arrays as bracket keys or JSON strings
            "application/x-www-form-urlencoded": { schema: body },
          },
        },
        responses: {
          "200": { description: "the answer (encryption_data signs it with the merchant's key)", content: content(answer) },
          ...Object.fromEntries(REFUSALS.map(([status, description]) => [status, { description, content: content(refusal) }])),
        },
      },
    };
  }
  return paths;
}

const operatorError = { type: "object", required: ["error", "message"], properties: { error: { type: "string" }, message: { type: "string" } } };
const anyJson = { type: "object" };

/** The operator API: what each call does (README "Operator API"); answers are JSON objects, errors { error, message }. */
const OPERATOR: [method: string, path: string, summary: string][] = [
  ["get", "/__sandbox/health", "200 once ready: status, scenario, signature_mode, time"],
  ["get", "/__sandbox/openapi.json", "this document"],
  ["get", "/__sandbox/requests", "the request log; filters merchant_id, order_no, operation, http_status (403 or 4xx), since, until, limit"],
  ["get", "/__sandbox/requests.har", "the request log as HAR 1.2 (same filters)"],
  ["post", "/__sandbox/verify", "replays a recording (HAR 1.2, up to 20 MB) against a fresh Sandgate and answers verify's JSON report; ignore (repeatable), suggest=1"],
  ["get", "/__sandbox/coverage", "rules that answered, outcomes never produced; merchant_id, format=markdown"],
  ["delete", "/__sandbox/coverage", "clears the coverage (merchant_id, or all)"],
  ["get", "/__sandbox/clock", "the sandbox clock"],
  ["post", "/__sandbox/clock", 'moves the clock forward: {"advance":"3d"} or {"advance_seconds":90}'],
  ["get", "/__sandbox/transactions", "transactions with their history; merchant_id, order_no"],
  ["get", "/__sandbox/refunds", "refunds; merchant_id, transaction_id"],
  ["post", "/__sandbox/refunds/{ref}/settle", 'settles an accepted refund: {"result":"processed"|"failed"}'],
  ["post", "/__sandbox/payments/{transaction_id}/complete", 'finishes a payment waiting for its payer: {"outcome":"paid"|...}'],
  ["get", "/__sandbox/payouts", "payouts; merchant_id, status, request_id"],
  ["post", "/__sandbox/payouts/{transaction_id}/complete", "completes a pending payout"],
  ["post", "/__sandbox/payouts/{transaction_id}/fail", "fails a pending payout: {failure_type, failure_reason}"],
  ["get", "/__sandbox/subscriptions", "subscriptions with their deductions; merchant_id, recurring_id"],
  ["post", "/__sandbox/subscriptions/{recurring_id}/charge", "charges the next deduction now"],
  ["get", "/__sandbox/notifications", "the notification outbox with every attempt; merchant_id, event, state, check (a receiver check's id)"],
  ["post", "/__sandbox/notifications/deliver", "attempts every notification due now"],
  ["post", "/__sandbox/notifications/{id}/resend", "sends a notification again"],
  ["post", "/__sandbox/notifications/trigger", "a test notification to any URL (merchant_id, url, event, data, notify)"],
  ["post", "/__sandbox/receiver-checks", "checks a merchant's notification receiver with signed, tampered and malformed notifications; answers the report (sandgate check-receiver)"],
  ["get", "/__sandbox/scenarios", "scenarios, the global one, bindings, file errors"],
  ["get", "/__sandbox/scenarios/{name}", "one scenario with its rules"],
  ["put", "/__sandbox/scenarios/global", 'the global scenario: {"name":"declines"}'],
  ["put", "/__sandbox/scenarios/bindings/{merchantId}", 'one merchant\'s scenario: {"name":"3ds"}'],
  ["delete", "/__sandbox/scenarios/bindings/{merchantId}", "removes a merchant's binding"],
  ["post", "/__sandbox/scenarios/reload", "reads the scenario files again"],
  ["post", "/__sandbox/reset", 'back to the fixtures: {} for all, {"merchant_id":"M1"} for one'],
];

function operatorPaths(): Json {
  const paths: Record<string, Json> = {};
  for (const [method, path, summary] of OPERATOR) {
    const parameters = [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    (paths[path] ??= {})[method] = {
      tags: ["operator"],
      summary,
      ...(parameters.length ? { parameters } : {}),
      ...(OPERATOR_BODIES[`${method} ${path}`]
        ? { requestBody: { required: true, content: { "application/json": { schema: jsonSchema(OPERATOR_BODIES[`${method} ${path}`]!, "input") } } } }
        : {}),
      responses: {
        "200": { description: "done", content: { "application/json": { schema: anyJson } } },
        default: { description: "refused: { error, message }", content: { "application/json": { schema: operatorError } } },
      },
    };
  }
  return paths;
}

export function openApiDocument(operations: readonly Operation[], version: string): Json {
  return {
    openapi: "3.1.0",
    info: {
      title: "Sandgate: the payment gateway's API, and the sandbox's operator API",
      version,
      description: "Every /v1 operation of the gateway as Sandgate serves it, and /__sandbox for testers and CI (guarded by ADMIN_TOKEN when set).",
    },
    servers: [{ url: "/" }],
    tags: [
      { name: "gateway", description: "the gateway's interface: sign each request with encryption_data" },
      { name: "operator", description: "scenarios, clock, forced steps, logs" },
    ],
    paths: { ...operationPaths(operations), ...operatorPaths() },
    components: { securitySchemes: { adminToken: { type: "http", scheme: "bearer", description: "ADMIN_TOKEN, for /__sandbox when set" } } },
  };
}

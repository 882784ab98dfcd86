// GET /__sandbox/openapi.json: OpenAPI 3.1 of every /v1 operation, the payer pages and the operator
// API. Request bodies (JSON and form encodings) come from the zod schema each operation validates
// with; answers (XML, JSON, HTML) and refusals from src/api/answers.ts; the operator API's bodies
// from the zod schemas its calls read them with (src/api/operator-bodies.ts), its answers, refusals and
// operationIds from src/api/operator-calls.ts. `redocly lint` (recommended) finds no error in it and
// openapi-typescript makes a typed client of it (test/openapi-tools.test.ts, docs/openapi.md).
// Built once, on first request.
import { z } from "zod";
import type { Operation } from "../http/operation.js";
import { ANSWERS, jsonRefusal, xmlRefusal } from "./answers.js";
import { OUTCOME_HEADER, operationOutcomes } from "../scenarios/outcome-header.js";
import { OPERATOR_CALLS } from "./operator-calls.js";
import { outsideUnits } from "./operator-call.js";
import { payerPageBody, payerPageFinished, payerPageRefusal, payerPageResult } from "./operator-answers.js";
import { operatorError } from "./operator-answers.js";

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
  const scenario = {
    name: "X-Sandbox-Scenario",
    in: "header",
    required: false,
    description: "the scenario deciding this request (stronger than the merchant's and the global one)",
    schema: { type: "string" },
  };
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
    const answer =
      op.format === "html"
        ? { type: "string", description: "the gateway's loading page (form theForm, posted to the hosted checkout)" }
        : jsonSchema(ANSWERS[op.name]!, "output");
    const content = (schema: Json) => ({ [media]: { schema: op.format === "xml" ? { ...schema, xml: { name: "respon" } } : schema } });
    paths[op.path] = {
      post: {
        operationId: op.name,
        tags: ["gateway"],
        summary: `${op.name}${op.registeredIpOnly ? " (from the merchant's registered IPs only)" : ""}`,
        // authenticated by encryption_data in the body (signed with the merchant's key), not by a header
        security: NO_HEADER,
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

/** Who may call: the gateway's operations and the payer pages take no header (a signature in the body, a page id in the address). */
const NO_HEADER: Json[] = [];
const ADMIN: Json[] = [{ adminToken: [] }];
/** sandgate listen's calls: the three headers together prove the merchant's key */
const MERCHANT_KEY: Json[] = [{ listenMerchant: [], listenTime: [], listenSignature: [] }];

const json = (schema: Json) => ({ "application/json": { schema } });
const PATH_PARAMS: Record<string, string> = {
  ref: "the refund's refund_reference_id",
  transaction_id: "the payment's (or payout's) transaction_id",
  recurring_id: "the subscription's recurring_id",
  id: "the notification's notification_id",
  name: "a scenario's name",
  merchantId: "the merchant's merchant_id",
  kind: "the page: checkout, 3ds or apm",
  pageId: "the page's id (issuer_url and the checkout's landing name it)",
};
const pathParameters = (path: string): Json[] =>
  [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: "path",
    required: true,
    description: PATH_PARAMS[m[1]!],
    schema: m[1] === "kind" ? { type: "string", enum: ["checkout", "3ds", "apm"] } : { type: "string" },
  }));

/** The operator API: operationIds, bodies, answers and refusals, from the table of calls (src/api/operator-calls.ts). */
function operatorPaths(): Json {
  const paths: Record<string, Json> = {};
  const error = jsonSchema(operatorError, "output");
  for (const call of OPERATOR_CALLS) {
    const parameters = [
      ...pathParameters(call.path),
      ...Object.entries(call.query ?? {}).map(([name, description]) => ({ name, in: "query", required: false, description, schema: { type: "string" } })),
    ];
    const body = typeof call.body === "object" ? call.body : undefined;
    const answer = jsonSchema(call.answer, "output");
    const responses: Record<string, Json> = {
      [String(call.status ?? 200)]: {
        description: call.status === 201 ? "created" : "done",
        // an answer that is only text (a state file) has only its text type; another may also come as text (coverage as Markdown)
        content:
          call.text && call.answer instanceof z.ZodString
            ? { [call.text]: { schema: { type: "string" } } }
            : { ...json(answer), ...(call.text ? { [call.text]: { schema: { type: "string" } } } : {}) },
      },
    };
    if (call.alike) responses[String(call.alike[0])] = { description: call.alike[1], content: json(answer) };
    for (const [status, problem] of Object.entries(call.problems ?? {})) {
      responses[status] =
        typeof problem === "string"
          ? { description: problem, content: json(error) }
          : { description: problem.description, content: json(jsonSchema(problem.schema, "output")) };
    }
    if (!call.open)
      responses["401"] = {
        description: "unauthorised: ADMIN_TOKEN is set and the call did not send it (Authorization: Bearer <ADMIN_TOKEN>)",
        content: json(error),
      };
    if (call.method !== "get")
      responses["403"] = {
        description: "cross_site_refused: a browser sent it for another site (Sec-Fetch-Site or Origin); curl and scripts are not refused",
        content: json(error),
      };
    if (!outsideUnits(call)) responses["503"] = { description: "store_unavailable: the shared store (--redis-url) cannot be reached", content: json(error) };
    (paths[call.path] ??= {})[call.method] = {
      operationId: call.operationId,
      tags: ["operator"],
      summary: call.summary,
      security: call.open === "merchant key" ? MERCHANT_KEY : call.open ? NO_HEADER : ADMIN,
      ...(parameters.length ? { parameters } : {}),
      ...(body ? { requestBody: { required: true, content: json(jsonSchema(body, "input")) } } : {}),
      responses, // numeric keys: in ascending order
    };
  }
  return paths;
}

/** /pay/{kind}/{pageId}: the pages a payer is sent to (src/pages/payer-pages.ts); a script sends Accept: application/json. */
function payerPagePaths(): Json {
  const html = { "text/html": { schema: { type: "string" } } };
  const page = (schema: z.ZodType) => ({ ...html, ...json(jsonSchema(schema, "output")) });
  const outcome = {
    name: "outcome",
    in: "query",
    required: false,
    description: "ends the payment with this outcome of the page, as posting outcome=<name> would (wins over the form's)",
    schema: { type: "string" },
  };
  const moved = {
    description: "to the page the payment waits at now, the next page, or the merchant's return_url",
    headers: { Location: { description: "where to", schema: { type: "string" } } },
  };
  const refusals = {
    "400": {
      description: "invalid_outcome: the page does not offer it (allowed lists those it does); invalid_card: the card form has errors (problems); form_refused",
      content: page(payerPageRefusal),
    },
    "404": { description: "page_not_found: no such page", content: page(payerPageRefusal) },
    "409": { description: "payment_not_pending: the payment is finished already; nothing was charged again", content: page(payerPageFinished) },
    "503": { description: "the shared store (--redis-url) cannot be reached", content: html },
  };
  const common = { tags: ["payer"], security: NO_HEADER, parameters: [...pathParameters("/pay/{kind}/{pageId}"), outcome] };
  return {
    "/pay/{kind}/{pageId}": {
      get: {
        ...common,
        operationId: "showPayerPage",
        summary:
          "the page the payment waits at (hosted checkout, 3-D Secure challenge, APM page), or its result once finished; with ?outcome= it acts as a post",
        responses: {
          "200": { description: "the page (with ?outcome= and Accept: application/json, where the payment stands)", content: page(payerPageResult) },
          "303": moved,
          ...refusals,
        },
      },
      post: {
        ...common,
        operationId: "submitPayerPage",
        summary: "what the page's forms send, and what a script sends without a browser: outcome=<name>, the 3-D Secure code, or the card form",
        requestBody: {
          required: false,
          content: {
            "application/x-www-form-urlencoded": { schema: jsonSchema(payerPageBody, "input") },
            "application/json": { schema: jsonSchema(payerPageBody, "input") },
          },
        },
        responses: {
          "200": {
            description: "the result page (Accept: application/json: where the payment stands, next_url when it waits at another page)",
            content: page(payerPageResult),
          },
          "303": moved,
          ...refusals,
          "413": { description: "form_refused: the form is larger than 1 MB", content: page(payerPageRefusal) },
        },
      },
    },
  };
}

export function openApiDocument(operations: readonly Operation[], version: string): Json {
  return {
    openapi: "3.1.0",
    info: {
      title: "Sandgate: the payment gateway's API, and the sandbox's operator API",
      version,
      description:
        "Every /v1 operation of the gateway as Sandgate serves it (signed with encryption_data in the body, no header), the payer pages (/pay), and /__sandbox for testers and CI (guarded by ADMIN_TOKEN when the server has one).",
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: "/" }],
    tags: [
      { name: "gateway", description: "the gateway's interface: sign each request with encryption_data" },
      { name: "payer", description: "the pages a payer is sent to: hosted checkout, 3-D Secure challenge, APM page" },
      { name: "operator", description: "scenarios, clock, forced steps, logs" },
    ],
    paths: { ...operationPaths(operations), ...payerPagePaths(), ...operatorPaths() },
    components: {
      securitySchemes: {
        listenMerchant: { type: "apiKey", in: "header", name: "X-Sandgate-Merchant", description: "sandgate listen: the merchant it listens for" },
        listenTime: {
          type: "apiKey",
          in: "header",
          name: "X-Sandgate-Time",
          description: "sandgate listen: the request's time, unix seconds (within 300 s of the server's)",
        },
        listenSignature: {
          type: "apiKey",
          in: "header",
          name: "X-Sandgate-Signature",
          description:
            "sandgate listen: sha256(merchant_id + time + method + path + the merchant's secret key), lowercase hex; path without the query. A merchant's key opens that merchant's notifications only; ADMIN_TOKEN is not needed",
        },
        adminToken: {
          type: "http",
          scheme: "bearer",
          description:
            "ADMIN_TOKEN (or --admin-token). When the server is started with one, every /__sandbox call but health, this document and sandgate listen's needs `Authorization: Bearer <ADMIN_TOKEN>` and answers 401 unauthorised without it (a browser signed in at the dashboard sends it as its sandgate_admin cookie instead). Without ADMIN_TOKEN the server needs no token: leave the header out (one sent is ignored).",
        },
      },
    },
  };
}

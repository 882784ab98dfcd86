// /__sandbox: the operator API for testers and CI (JSON in, JSON out; errors are { error, message })
// and the QA dashboard (/__sandbox/, HTML). ADMIN_TOKEN, when set, guards everything but /health.
import express, { Router, type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { adminSession } from "../dashboard/session.js";
import { dashboard } from "../dashboard/dashboard.js";
import type { Deps } from "../deps/deps.js";
import { resetState, settleRefundNow } from "../admin/actions.js";
import { advanceClock, freezeClock, readClock, setClock, unfreezeClock } from "../admin/clock-moves.js";
import { scenariosApi } from "../admin/scenarios.js";
import { answerJson, pathParam, problem, queryText, whereQuery } from "../admin/shared.js";
import { applyDue } from "../schedule/scheduler.js";
import { formTokens } from "../admin/cross-site.js";
import { acceptsOnly } from "../admin/accepts-only.js";
import { callHandlers, routePathOf, type On } from "../admin/call-handlers.js";
import { OPERATOR_CALLS } from "../api/operator-calls.js";
import type { OperatorCall } from "../api/operator-call.js";
import { depsOf, unitFor } from "../http/in-unit.js";
import { throughGate } from "../admin/gate.js";
import { notificationsApi } from "../admin/notifications-api.js";
import { listenApi } from "../admin/listen-api.js";
import { receiverChecksApi } from "../admin/receiver-checks.js";
import { payoutsApi } from "../admin/payouts.js";
import { paymentsApi } from "../admin/payments.js";
import { subscriptionsApi } from "../admin/subscriptions-api.js";
import { merchantsApi } from "../admin/merchant-keys.js";
import { harOf } from "../admin/har-export.js";
import { verifyApi } from "../admin/verify-api.js";
import { stateApi } from "../admin/state-api.js";
import { snapshotsApi } from "../admin/snapshots-api.js";
import { coverageMarkdown, readScope } from "../scenarios/coverage.js";
import { packageVersion } from "../base/paths.js";
import { filterProblem, type RequestFilter, type RequestLogEntry } from "../store/request-log.js";

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const hasBody = (req: Request) =>
  req.headers["transfer-encoding"] !== undefined || (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0");

/**
 * The JSON API's writes take JSON or nothing: a form body (curl -d's default type) or text is refused,
 * not read as "no body" (which reset, say, would once have taken for "everything").
 */
function jsonOnly(req: Request, res: Response, next: NextFunction): void {
  if (!WRITES.has(req.method) || !hasBody(req) || req.is("application/json")) return next();
  problem(
    res,
    400,
    "malformed_body",
    `an operator call's body is JSON, sent with Content-Type: application/json (this one is ${req.get("content-type") ?? "of no type"})`,
  );
}

/** What runs before a call's handler: its body read and checked (JSON, only the keys it accepts), then its unit of work. */
function inFront(deps: Deps, call: OperatorCall): RequestHandler[] {
  const reads = call.body === "raw" ? [] : call.method === "get" ? [json] : [jsonOnly, json, acceptsOnly(call.body)];
  return [...reads, unitFor(deps, call.scope)];
}
const json = express.json({ limit: "100kb" });

/**
 * The operator API, made from its table (api/operator-calls.ts): every call mounted at its method and
 * path with its body check, its unit of work and its handler (admin/*.ts hand theirs over by id).
 */
export function operatorApi(deps: Deps): Router {
  const router = Router();
  router.use(formTokens()); // before the sign-in, whose form carries one too
  router.use(
    adminSession(
      deps.config.adminToken,
      deps.config.baseUrl,
      OPERATOR_CALLS.filter((c) => c.open).map((c) => routePathOf(c.path)),
    ),
  );
  const { on, handlersOf } = callHandlers();
  operatorCalls(deps, on);
  scenariosApi(deps, on);
  notificationsApi(deps, on);
  listenApi(deps, on);
  receiverChecksApi(deps, on);
  payoutsApi(deps, on);
  paymentsApi(deps, on);
  subscriptionsApi(deps, on);
  merchantsApi(deps, on);
  verifyApi(deps, on);
  stateApi(deps, on);
  snapshotsApi(deps, on);
  for (const call of OPERATOR_CALLS) {
    // app.ts serves the document ahead of the host check and the token: anyone may read it
    if (call.operationId === "getOpenApiDocument") continue;
    router[call.method](routePathOf(call.path), ...inFront(deps, call), ...handlersOf(call.operationId));
  }
  router.use(dashboard(deps));
  router.use((req: Request, res: Response) => problem(res, 404, "not_found", `no operator route ${req.method} ${req.path}`));
  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: number }).status ?? 500;
    if (status === 413) return problem(res, 413, "body_too_large", "an operator call's JSON body is 100 kB at most");
    problem(res, status, status === 400 ? "malformed_body" : "internal_error", status === 400 ? "the body is not valid JSON" : "see the server log");
  });
  return router;
}

/** This module's calls: health, the request log, coverage, the clock, lists, refund settlement, reset. */
function operatorCalls(server: Deps, on: On): void {
  on("getHealth", (_req, res) => {
    const deps = depsOf(res, server);
    res.json({ status: "ok", scenario: deps.scenarios.global(), signature_mode: deps.config.signatureMode, time: deps.clock.now().toISOString() });
  });

  /** ?merchant_id=&order_no=&operation=&http_status=(403|4xx)&since=&until=(ISO)&limit= */
  const requestFilter = (req: Request): RequestFilter => ({
    merchant_id: queryText(req, "merchant_id"),
    order_no: queryText(req, "order_no"),
    operation: queryText(req, "operation"),
    http_status: queryText(req, "http_status"),
    since: queryText(req, "since"),
    until: queryText(req, "until"),
    limit: Math.min(Number(queryText(req, "limit") ?? 100) || 100, 5000),
  });
  /** The log's entries the query selects, or a 400 answered (undefined). */
  const selected = (req: Request, res: Response): RequestLogEntry[] | undefined => {
    const filter = requestFilter(req);
    const bad = filterProblem(filter);
    if (bad) {
      problem(res, 400, "invalid_query", bad);
      return undefined;
    }
    return server.requests.list(filter);
  };

  on("listRequests", (req, res) => {
    const requests = selected(req, res);
    if (requests) res.json({ requests });
  });

  // the same requests as HAR 1.2, for browsers' dev tools and API clients; an export (megabytes
  // when the log is full) is built and sent one at a time per process, three more waiting
  on("exportRequestsHar", throughGate(1, 3, "the HAR export", 2), (req, res) => {
    const deps = depsOf(res, server);
    const requests = selected(req, res);
    if (!requests) return;
    const origin = `${req.protocol}://${req.get("host") ?? "localhost"}`;
    res.setHeader("Content-Disposition", 'attachment; filename="sandgate-requests.har"');
    res.json(harOf(requests, (id) => deps.requests.exchange(id), origin, packageVersion()));
  });

  // which rules answered and which outcomes were never produced: ?merchant_id= (default: all), ?format=markdown
  on("getCoverage", (req, res) => {
    const deps = depsOf(res, server);
    const merchant = queryText(req, "merchant_id");
    const scope = readScope(
      { operations: queryText(req, "operations"), scenario: queryText(req, "scenario") },
      { scenario: (name) => deps.scenarios.get(name) !== undefined, used: () => deps.scenarios.coverage.operationsUsed(merchant) },
    );
    if ("refused" in scope) return problem(res, 400, "invalid_scope", scope.refused);
    const report = deps.scenarios.coverage.report(merchant, scope);
    if (queryText(req, "format") === "markdown") res.type("text/markdown; charset=utf-8").send(coverageMarkdown(report));
    else res.json(report);
  });
  on("clearCoverage", (req, res) => {
    const deps = depsOf(res, server);
    deps.scenarios.coverage.clear(queryText(req, "merchant_id"));
    res.json({ cleared: queryText(req, "merchant_id") ?? "all" });
  });

  on("getClock", async (req, res) => answerJson(res, await readClock(depsOf(res, server), queryText(req, "merchant_id")), (v) => v));
  // the moves of a test clock: forward by a duration, to a later moment, frozen, running again
  on("advanceClock", async (req, res) => answerJson(res, await advanceClock(depsOf(res, server), req.body ?? {}), (v) => v));
  on("setClock", async (req, res) => answerJson(res, await setClock(depsOf(res, server), req.body ?? {}), (v) => v));
  on("freezeClock", async (req, res) => answerJson(res, await freezeClock(depsOf(res, server), req.body ?? {}), (v) => v));
  on("unfreezeClock", async (req, res) => answerJson(res, await unfreezeClock(depsOf(res, server), req.body ?? {}), (v) => v));

  on("listTransactions", async (req, res) => {
    const deps = depsOf(res, server);
    await applyDue(deps);
    res.json({ transactions: whereQuery(req, deps.store.data.transactions, ["merchant_id", "order_no"]) });
  });

  on("listRefunds", async (req, res) => {
    const deps = depsOf(res, server);
    await applyDue(deps);
    res.json({ refunds: whereQuery(req, deps.store.data.refunds, ["merchant_id", "transaction_id"]) });
  });

  // { "result": "processed" | "failed" }: settles an accepted refund now.
  on("settleRefund", async (req, res) => {
    const deps = depsOf(res, server);
    const result = (req.body as { result?: unknown } | undefined)?.result;
    answerJson(res, await settleRefundNow(deps, pathParam(req, "ref"), result), (refund) => ({ refund }));
  });

  // { "merchant_id": "M1" } resets one merchant's records to fixtures; { "all": true } everything.
  on("resetState", async (req, res) => {
    const deps = depsOf(res, server);
    return answerJson(res, await resetState(deps, req.body), (v) => v);
  });
}

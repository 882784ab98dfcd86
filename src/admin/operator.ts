// /__sandbox: the operator API for testers and CI (JSON in, JSON out; errors are { error, message })
// and the QA dashboard (/__sandbox/, HTML). ADMIN_TOKEN, when set, guards everything but /health.
import express, { Router, type NextFunction, type Request, type Response } from "express";
import { adminSession } from "./session.js";
import { dashboard } from "./dashboard.js";
import type { Deps } from "../deps.js";
import { advanceClock, resetState, settleRefundNow } from "./actions.js";
import { scenariosApi } from "./scenarios.js";
import { answerJson, problem, queryText, whereQuery } from "./shared.js";
import { applyDue } from "../schedule/scheduler.js";
import { formTokens, isDashboard } from "./cross-site.js";
import { acceptsOnly, NO_BODY, OPERATOR_BODIES, routeOf } from "./bodies.js";
import { throughGate } from "./gate.js";
import { notificationsApi } from "./notifications-api.js";
import { receiverChecksApi } from "./receiver-checks.js";
import { payoutsApi } from "./payouts.js";
import { paymentsApi } from "./payments.js";
import { subscriptionsApi } from "./subscriptions-api.js";
import { merchantsApi } from "./merchant-keys.js";
import { harOf } from "./har-export.js";
import { verifyApi } from "./verify-api.js";
import { coverageMarkdown } from "../scenarios/coverage.js";
import { packageVersion } from "../paths.js";
import { filterProblem, type RequestFilter, type RequestLogEntry } from "../request-log.js";

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const hasBody = (req: Request) => req.headers["transfer-encoding"] !== undefined || (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0");

/**
 * The JSON API's writes take JSON or nothing: a form body (curl -d's default type) or text is refused,
 * not read as "no body" (which reset, say, would once have taken for "everything"). The dashboard's
 * forms and the sign-in post forms, and verify reads its own body: they are mounted before this.
 */
function jsonOnly(req: Request, res: Response, next: NextFunction): void {
  if (!WRITES.has(req.method) || isDashboard(req.path) || !hasBody(req) || req.is("application/json")) return next();
  problem(res, 400, "malformed_body", `an operator call's body is JSON, sent with Content-Type: application/json (this one is ${req.get("content-type") ?? "of no type"})`);
}

export function operatorApi(deps: Deps): Router {
  const router = Router();
  const { store, clock } = deps;
  router.use(formTokens()); // before the sign-in, whose form carries one too
  router.use(adminSession(deps.config.adminToken, deps.config.baseUrl));
  router.use(verifyApi(deps)); // reads its own body (a HAR up to 20 MB): before the 100 kb JSON parser
  router.use(jsonOnly, express.json({ limit: "100kb" }));
  // every call's body is checked for keys it does not accept before the call reads it (admin/bodies.ts)
  for (const [key, schema] of [...Object.entries(OPERATOR_BODIES), ...NO_BODY.map((k) => [k, undefined] as const)]) {
    const { method, path } = routeOf(key);
    router[method](path, acceptsOnly(schema));
  }

  router.get("/health", (_req, res) => {
    res.json({ status: "ok", scenario: deps.scenarios.global(), signature_mode: deps.config.signatureMode, time: clock.now().toISOString() });
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
    return deps.requests.list(filter);
  };

  router.get("/requests", (req, res) => {
    const requests = selected(req, res);
    if (requests) res.json({ requests });
  });

  // the same requests as HAR 1.2, for browsers' dev tools and API clients; an export (megabytes
  // when the log is full) is built and sent one at a time per process, three more waiting
  router.get("/requests.har", throughGate(1, 3, "the HAR export", 2), (req, res) => {
    const requests = selected(req, res);
    if (!requests) return;
    const origin = `${req.protocol}://${req.get("host") ?? "localhost"}`;
    res.setHeader("Content-Disposition", 'attachment; filename="sandgate-requests.har"');
    res.json(harOf(requests, (id) => deps.requests.exchange(id), origin, packageVersion()));
  });

  // which rules answered and which outcomes were never produced: ?merchant_id= (default: all), ?format=markdown
  router.get("/coverage", (req, res) => {
    const report = deps.scenarios.coverage.report(queryText(req, "merchant_id"));
    if (queryText(req, "format") === "markdown") res.type("text/markdown; charset=utf-8").send(coverageMarkdown(report));
    else res.json(report);
  });
  router.delete("/coverage", (req, res) => {
    deps.scenarios.coverage.clear(queryText(req, "merchant_id"));
    res.json({ cleared: queryText(req, "merchant_id") ?? "all" });
  });

  router.get("/clock", (_req, res) => {
    res.json({ now: clock.now().toISOString(), offset_ms: clock.offsetMs() });
  });

  // { "advance": "90s" | "2h" | "3d" | "1w" } or { "advance_seconds": 90 }: moves the sandbox clock
  // forward and applies what fell due (refund settlement, ...).
  router.post("/clock", async (req, res) => answerJson(res, await advanceClock(deps, req.body ?? {}), (v) => v));

  router.get("/transactions", async (req, res) => {
    await applyDue(deps);
    res.json({ transactions: whereQuery(req, store.data.transactions, ["merchant_id", "order_no"]) });
  });

  router.get("/refunds", async (req, res) => {
    await applyDue(deps);
    res.json({ refunds: whereQuery(req, store.data.refunds, ["merchant_id", "transaction_id"]) });
  });

  // { "result": "processed" | "failed" }: settles an accepted refund now.
  router.post("/refunds/:ref/settle", async (req, res) => {
    const result = (req.body as { result?: unknown } | undefined)?.result;
    answerJson(res, await settleRefundNow(deps, req.params.ref, result), (refund) => ({ refund }));
  });

  // { "merchant_id": "M1" } resets one merchant's records to fixtures; { "all": true } everything.
  router.post("/reset", async (req, res) => answerJson(res, await resetState(deps, req.body), (v) => v));

  router.use(dashboard(deps));
  router.use(paymentsApi(deps));
  router.use(notificationsApi(deps));
  router.use(receiverChecksApi(deps));
  router.use(payoutsApi(deps));
  router.use(subscriptionsApi(deps));
  router.use(merchantsApi(deps));
  router.use(scenariosApi(deps));
  router.use((req: Request, res: Response) => problem(res, 404, "not_found", `no operator route ${req.method} ${req.path}`));
  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: number }).status ?? 500;
    if (status === 413) return problem(res, 413, "body_too_large", "an operator call's JSON body is 100 kB at most");
    problem(res, status, status === 400 ? "malformed_body" : "internal_error", status === 400 ? "the body is not valid JSON" : "see the server log");
  });
  return router;
}

// /__sandbox: the operator API for testers and CI (JSON in, JSON out; errors are { error, message })
// and the QA dashboard (/__sandbox/, HTML). ADMIN_TOKEN, when set, guards everything but /health.
import express, { Router, type NextFunction, type Request, type Response } from "express";
import { adminSession } from "./session.js";
import { dashboard } from "./dashboard.js";
import type { Deps } from "../deps.js";
import { advanceClock, resetState, settleRefundNow } from "./actions.js";
import { scenariosApi } from "./scenarios.js";
import { answerJson, bringUpToDate, problem, queryText, whereQuery } from "./shared.js";
import { notificationsApi } from "./notifications.js";
import { payoutsApi } from "./payouts.js";
import { paymentsApi } from "./payments.js";
import { subscriptionsApi } from "./subscriptions.js";

export function operatorApi(deps: Deps): Router {
  const router = Router();
  const { store, clock } = deps;
  router.use(adminSession(deps.config.adminToken));
  router.use(express.json({ limit: "100kb" }));

  router.get("/health", (_req, res) => {
    res.json({ status: "ok", scenario: deps.scenarios.global(), signature_mode: deps.config.signatureMode, time: clock.now().toISOString() });
  });

  router.get("/requests", (req, res) => {
    const limit = Math.min(Number(queryText(req, "limit") ?? 100) || 100, 1000);
    res.json({ requests: deps.requests.list({ merchant_id: queryText(req, "merchant_id"), order_no: queryText(req, "order_no"), limit }) });
  });

  router.get("/clock", (_req, res) => {
    res.json({ now: clock.now().toISOString(), offset_ms: clock.offsetMs() });
  });

  // { "advance": "90s" | "2h" | "3d" | "1w" } or { "advance_seconds": 90 }: moves the sandbox clock
  // forward and applies what fell due (refund settlement, ...).
  router.post("/clock", async (req, res) => answerJson(res, await advanceClock(deps, req.body ?? {}), (v) => v));

  router.get("/transactions", async (req, res) => {
    await bringUpToDate(deps);
    res.json({ transactions: whereQuery(req, store.data.transactions, ["merchant_id", "order_no"]) });
  });

  router.get("/refunds", async (req, res) => {
    await bringUpToDate(deps);
    res.json({ refunds: whereQuery(req, store.data.refunds, ["merchant_id", "transaction_id"]) });
  });

  // { "result": "processed" | "failed" }: settles an accepted refund now.
  router.post("/refunds/:ref/settle", async (req, res) => {
    const result = (req.body as { result?: unknown } | undefined)?.result;
    answerJson(res, await settleRefundNow(deps, req.params.ref, result), (refund) => ({ refund }));
  });

  // { "merchant_id": "M1" } resets one merchant's records to fixtures; {} resets everything.
  router.post("/reset", async (req, res) => answerJson(res, await resetState(deps, (req.body as { merchant_id?: unknown } | undefined)?.merchant_id), (v) => v));

  router.use(dashboard(deps));
  router.use(paymentsApi(deps));
  router.use(notificationsApi(deps));
  router.use(payoutsApi(deps));
  router.use(subscriptionsApi(deps));
  router.use(scenariosApi(deps));
  router.use((req: Request, res: Response) => problem(res, 404, "not_found", `no operator route ${req.method} ${req.path}`));
  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: number }).status ?? 500;
    problem(res, status, status === 400 ? "malformed_body" : "internal_error", status === 400 ? "the body is not valid JSON" : "see the server log");
  });
  return router;
}

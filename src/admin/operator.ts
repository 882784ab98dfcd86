// /__sandbox: the operator API for testers and CI. JSON in, JSON out; errors are
// { error, message }. ADMIN_TOKEN, when set, guards everything but /health.
import { timingSafeEqual } from "node:crypto";
import express, { Router, type NextFunction, type Request, type Response } from "express";
import type { Deps } from "../deps.js";
import { settleRefund } from "../domain/lifecycle.js";
import { parseDuration } from "./duration.js";
import { scenariosApi } from "./scenarios.js";
import { bringUpToDate, problem, queryText, whereQuery } from "./shared.js";
import { notificationsApi } from "./notifications.js";
import { payoutsApi } from "./payouts.js";
import { paymentsApi } from "./payments.js";
import { subscriptionsApi } from "./subscriptions.js";
import { notifyRefund } from "../notify/events.js";

function guard(token: string | undefined) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!token || req.path === "/health") return next();
    const given = Buffer.from(req.get("authorization")?.replace(/^Bearer\s+/i, "") ?? "");
    const expected = Buffer.from(token);
    if (given.length === expected.length && timingSafeEqual(given, expected)) return next();
    res.status(401).json({ error: "unauthorised", message: "send Authorization: Bearer <ADMIN_TOKEN>" });
  };
}

/** One call moves the clock at most ten years: every deduction, refund and payout due in between is made, in order. */
const MAX_ADVANCE_MS = 3660 * 86_400_000;


export function operatorApi(deps: Deps): Router {
  const router = Router();
  const { store, clock } = deps;
  router.use(guard(deps.config.adminToken));
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
  router.post("/clock", async (req, res) => {
    const body = (req.body ?? {}) as { advance?: unknown; advance_seconds?: unknown };
    const ms = body.advance_seconds !== undefined ? Number(body.advance_seconds) * 1000 : parseDuration(body.advance);
    if (ms === undefined || !Number.isFinite(ms) || ms < 0 || ms > MAX_ADVANCE_MS) {
      return problem(res, 400, "invalid_advance", 'send {"advance":"90s"} (s, m, h, d, w) or {"advance_seconds":90}; the clock only moves forward, at most 3660 days per call');
    }
    clock.advance(ms);
    const applied = await bringUpToDate(deps);
    res.json({ now: clock.now().toISOString(), offset_ms: clock.offsetMs(), applied });
  });

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
    const result = (req.body as { result?: unknown } | undefined)?.result ?? "processed";
    if (result !== "processed" && result !== "failed") return problem(res, 400, "invalid_result", 'result must be "processed" or "failed"');
    const refund = store.data.refunds.find((r) => r.refund_reference_id === req.params.ref);
    if (!refund) return problem(res, 404, "refund_not_found", `no refund ${req.params.ref}`);
    if (refund.state !== "accepted") return problem(res, 409, "refund_settled", `refund ${refund.refund_reference_id} is already ${refund.state}`);
    const tx = store.data.transactions.find((t) => t.transaction_id === refund.transaction_id);
    settleRefund(refund, tx, result, clock.now(), store.ids, "operator");
    notifyRefund(deps, refund, tx, refund.notify);
    await store.commit();
    res.json({ refund });
  });

  // { "merchant_id": "M1" } resets one merchant's records to fixtures; {} resets everything.
  router.post("/reset", async (req, res) => {
    const merchant = (req.body as { merchant_id?: unknown } | undefined)?.merchant_id;
    if (merchant !== undefined && typeof merchant !== "string") return problem(res, 400, "invalid_merchant_id", "merchant_id must be a string");
    await store.reset(merchant);
    deps.scenarios.resetCounters(merchant);
    res.json({ reset: merchant ?? "all" });
  });

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

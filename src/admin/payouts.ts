// /__sandbox/payouts: list payouts as merchants see them, and force a PENDING one to COMPLETED or
// FAILED now (each change notifies the payout's notify_url). Errors: { error, message }.
import { Router, type Response } from "express";
import { codes } from "../codes.js";
import type { Deps } from "../deps.js";
import { bringUpToDate, problem, whereQuery } from "./shared.js";
import { failureReason, settlePayout } from "../domain/payout.js";
import { notifyPayout, payoutResponse } from "../gateway/payout-response.js";
import type { Payout } from "../store/types.js";


/** The merchant's view plus what only the sandbox knows: the deciding rule and what happens next. */
function operatorView(p: Payout) {
  const { encryption_data: _signature, ...view } = payoutResponse(p);
  return { ...view, sandbox: { rule: p.rule, due_at: p.due_at, next_status: p.next_status, next_failure_type: p.next_failure_type } };
}

export function payoutsApi(deps: Deps): Router {
  const router = Router();
  const { store, clock } = deps;

  // ?merchant_id=&status=&request_id=
  router.get("/payouts", async (req, res) => {
    await bringUpToDate(deps);
    res.json({ payouts: whereQuery(req, store.data.payouts, ["merchant_id", "status", "request_id"]).map(operatorView) });
  });

  /** Settles a PENDING payout now, or answers why not. */
  const settle = async (res: Response, id: string, to: "COMPLETED" | "FAILED", failure?: { type: string; reason: string }) => {
    await bringUpToDate(deps);
    const p = store.data.payouts.find((x) => x.transaction_id === id);
    if (!p) return problem(res, 404, "payout_not_found", `no payout ${id}`);
    const refused = settlePayout(p, to, failure, clock.now());
    if (refused) return problem(res, 409, "payout_final", `${refused}: only PENDING payouts move`);
    notifyPayout(p, deps.notifier, p.notify);
    await store.commit();
    res.json({ payout: operatorView(p) });
  };

  router.post("/payouts/:transaction_id/complete", (req, res) => settle(res, req.params.transaction_id, "COMPLETED"));

  // { "failure_type": "ACCOUNT_CLOSED", "failure_reason": "..." }: both optional (UNKNOWN, the catalogue's text)
  router.post("/payouts/:transaction_id/fail", (req, res) => {
    const body = (req.body ?? {}) as { failure_type?: unknown; failure_reason?: unknown };
    const type = body.failure_type ?? "UNKNOWN";
    if (typeof type !== "string" || !codes.payout_failure_types.includes(type)) {
      return problem(res, 400, "invalid_failure_type", `failure_type must be one of ${codes.payout_failure_types.join(", ")}`);
    }
    if (body.failure_reason !== undefined && typeof body.failure_reason !== "string") {
      return problem(res, 400, "invalid_failure_reason", "failure_reason must be a string");
    }
    return settle(res, req.params.transaction_id, "FAILED", { type, reason: body.failure_reason || failureReason(type) });
  });

  return router;
}

// POST /__sandbox/payments/<transaction_id>/complete {"outcome": "paid" | "failed" | ...}: finishes a
// pending payment as its payer would at its page (same outcomes, same effects: return result,
// notification, subscription), for CI and the dashboard. Mounted by operatorApi (guard included).
import { Router } from "express";
import { resultInfo } from "../codes.js";
import type { Deps } from "../deps.js";
import { resolveOutcome, stageOf, stageOutcomes } from "../domain/completion.js";
import { orderStatusOf } from "../domain/payment.js";
import { finishPayment, returnUrlFor } from "../pages/finish.js";
import type { Transaction } from "../store/types.js";
import { bringUpToDate, problem } from "./shared.js";
import { codes } from "../codes.js";

const view = (deps: Deps, tx: Transaction) => ({
  transaction_id: tx.transaction_id,
  order_status: orderStatusOf(tx.state),
  result_info: resultInfo(tx.result),
  payment_status: codes.payment_status[tx.state],
  return_url: returnUrlFor(deps, tx),
});

export function paymentsApi(deps: Deps): Router {
  const router = Router();

  router.post("/payments/:transaction_id/complete", async (req, res) => {
    await bringUpToDate(deps);
    const tx = deps.store.data.transactions.find((t) => t.transaction_id === req.params.transaction_id);
    if (!tx) return problem(res, 404, "transaction_not_found", `no transaction ${req.params.transaction_id}`);
    const stage = stageOf(tx);
    if (!stage) {
      return res.status(409).json({ error: "payment_not_pending", message: `payment ${tx.transaction_id} is ${tx.state} (${codes.payment_status[tx.state]}): only a pending payment can be completed`, ...view(deps, tx) });
    }
    const chosen = (req.body as { outcome?: unknown } | undefined)?.outcome;
    const outcome = typeof chosen === "string" ? resolveOutcome(stage, chosen) : undefined;
    if (typeof chosen !== "string" || !outcome) {
      return problem(res, 400, "invalid_outcome", `send {"outcome": one of ${stageOutcomes(stage).join(", ")}} (the payment waits at its ${stage} page)`);
    }
    const refusal = await finishPayment(deps, tx, { outcome, chosen, rule: `operator/${chosen}`, source: "operator", path: req.originalUrl, ip: req.ip ?? "" });
    if (refusal) return res.status(409).json({ error: "payment_not_pending", message: refusal.info, ...view(deps, tx) });
    res.json({ ...view(deps, tx), stage: stageOf(tx) ?? "" });
  });

  return router;
}

// /__sandbox/payouts: list payouts as merchants see them, and force a PENDING one to COMPLETED or
// FAILED now (each change notifies the payout's notify_url). Errors: { error, message }.
import type { Deps } from "../deps/deps.js";
import { depsOf } from "../http/in-unit.js";
import type { On } from "./call-handlers.js";
import { answerJson, whereQuery, pathParam } from "./shared.js";
import { applyDue } from "../schedule/scheduler.js";
import { settlePayoutNow } from "./actions.js";
import { payoutResponse } from "../notify/payout-notice.js";
import type { Payout } from "../domain/types.js";

/** The merchant's view plus what only the sandbox knows: the deciding rule and what happens next. */
function operatorView(p: Payout) {
  const { encryption_data: _signature, ...view } = payoutResponse(p);
  return { ...view, sandbox: { rule: p.rule, due_at: p.due_at, next_status: p.next_status, next_failure_type: p.next_failure_type } };
}

export function payoutsApi(server: Deps, on: On): void {
  // ?merchant_id=&status=&request_id=
  on("listPayouts", async (req, res) => {
    const deps = depsOf(res, server);
    await applyDue(deps);
    res.json({ payouts: whereQuery(req, deps.store.data.payouts, ["merchant_id", "status", "request_id"]).map(operatorView) });
  });

  on("completePayout", async (req, res) => {
    const deps = depsOf(res, server);
    return answerJson(res, await settlePayoutNow(deps, pathParam(req, "transaction_id"), "COMPLETED"), (p) => ({ payout: operatorView(p) }));
  });

  // { "failure_type": "ACCOUNT_CLOSED", "failure_reason": "..." }: both optional (UNKNOWN, the catalogue's text)
  on("failPayout", async (req, res) => {
    const deps = depsOf(res, server);
    return answerJson(res, await settlePayoutNow(deps, pathParam(req, "transaction_id"), "FAILED", req.body ?? {}), (p) => ({ payout: operatorView(p) }));
  });
}

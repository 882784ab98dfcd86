// POST /__sandbox/payments/<transaction_id>/complete {"outcome": "paid" | "failed" | ...}: finishes a
// pending payment as its payer would at its page (same outcomes, same effects: return result,
// notification, subscription), for CI and the dashboard. Mounted by operatorApi (guard included).
import { problem } from "../http/problem.js";
import { codes } from "../domain/codes.js";
import type { Deps } from "../deps/deps.js";
import { depsOf } from "../http/in-unit.js";
import type { On } from "./call-handlers.js";
import { stageOf } from "../domain/completion.js";
import { resultView } from "../pages/finish.js";
import type { Transaction } from "../domain/types.js";
import { completePaymentNow } from "./actions.js";
import { answerJson, pathParam } from "./shared.js";
import { PORTAL_ACTIONS, PORTAL_CALLS, runPortal } from "./portal.js";

/** The payment as the payer's return and the merchant's query see it now. */
const completionView = (deps: Deps, tx: Transaction) => ({
  ...resultView(deps, tx),
  payment_status: codes.payment_status[tx.state],
  /** the page it waits at now ("3ds" after a checkout chose 3-D Secure), or "" once finished */
  stage: stageOf(tx) ?? "",
});

export function paymentsApi(server: Deps, on: On): void {
  for (const action of PORTAL_ACTIONS) {
    on(PORTAL_CALLS[action], async (req, res) => answerJson(res, await runPortal(server, pathParam(req, "transaction_id"), action, req.body), (done) => done));
  }

  on("completePayment", async (req, res) => {
    const deps = depsOf(res, server);
    const outcome = (req.body as { outcome?: unknown } | undefined)?.outcome;
    const done = await completePaymentNow(deps, pathParam(req, "transaction_id"), outcome, req.originalUrl, req.ip ?? "");
    // a finished payment's 409 still says where it stands
    if ("problem" in done && done.problem.status === 409) {
      const tx = deps.store.records.transaction(pathParam(req, "transaction_id"))!;
      return problem(res, 409, done.problem.error, done.problem.message, completionView(deps, tx));
    }
    answerJson(res, done, (tx) => completionView(deps, tx));
  });
}

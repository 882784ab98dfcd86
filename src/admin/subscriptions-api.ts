// GET /__sandbox/subscriptions?merchant_id=&recurring_id=: every subscription as it is now (due
// deductions applied first), with its recurring_status code and the transactions it charged,
// first payment included, oldest first. Mounted by operatorApi (guard included).
import { codes } from "../domain/codes.js";
import type { Deps } from "../deps/deps.js";
import { depsOf } from "../http/in-unit.js";
import type { On } from "./call-handlers.js";
import { answerJson, whereQuery, pathParam } from "./shared.js";
import { applyDue } from "../schedule/scheduler.js";
import { chargeSubscriptionNow } from "./actions.js";

export function subscriptionsApi(server: Deps, on: On): void {
  on("listSubscriptions", async (req, res) => {
    const deps = depsOf(res, server);
    await applyDue(deps);
    const subscriptions = whereQuery(req, deps.store.data.subscriptions, ["merchant_id", "recurring_id"]).map((s) => ({
      ...s,
      recurring_status: codes.recurring_status[s.state],
      transactions: deps.store.data.transactions
        .filter((t) => t.merchant_id === s.merchant_id && (t.recurring_id === s.recurring_id || t.transaction_id === s.transaction_id))
        .sort((a, b) => a.created_at.localeCompare(b.created_at))
        .map((t) => ({
          transaction_id: t.transaction_id,
          order_no: t.order_no,
          amount: t.amount,
          currency: t.currency,
          payment_status: codes.payment_status[t.state],
          result: t.result,
          created_at: t.created_at,
        })),
    }));
    res.json({ subscriptions });
  });

  // charges the next deduction now (as if its date had come); 409 when nothing is left to charge
  on("chargeSubscription", async (req, res) => {
    const deps = depsOf(res, server);
    return answerJson(res, await chargeSubscriptionNow(deps, pathParam(req, "recurring_id")), (subscription) => ({
      subscription: { ...subscription, recurring_status: codes.recurring_status[subscription.state] },
    }));
  });
}

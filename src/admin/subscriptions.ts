// GET /__sandbox/subscriptions?merchant_id=&recurring_id=: every subscription as it is now (due
// deductions applied first), with its recurring_status code and the transactions it charged,
// first payment included, oldest first. Mounted by operatorApi (guard included).
import { Router, type Request } from "express";
import { codes } from "../codes.js";
import type { Deps } from "../deps.js";
import { catchUp } from "../scheduler.js";

export function subscriptionsApi(deps: Deps): Router {
  const router = Router();
  const { store, clock } = deps;
  const q = (req: Request, name: string) => (typeof req.query[name] === "string" ? (req.query[name] as string) : undefined);

  router.get("/subscriptions", async (req, res) => {
    if (catchUp(store.data, clock.now(), store.ids, deps) > 0) await store.commit();
    const merchant = q(req, "merchant_id");
    const recurring = q(req, "recurring_id");
    const subscriptions = store.data.subscriptions
      .filter((s) => (!merchant || s.merchant_id === merchant) && (!recurring || s.recurring_id === recurring))
      .map((s) => ({
        ...s,
        recurring_status: codes.recurring_status[s.state],
        transactions: store.data.transactions
          .filter((t) => t.merchant_id === s.merchant_id && (t.recurring_id === s.recurring_id || t.transaction_id === s.transaction_id))
          .sort((a, b) => a.created_at.localeCompare(b.created_at))
          .map((t) => ({ transaction_id: t.transaction_id, order_no: t.order_no, amount: t.amount, currency: t.currency, payment_status: codes.payment_status[t.state], result: t.result, created_at: t.created_at })),
      }));
    res.json({ subscriptions });
  });
  return router;
}

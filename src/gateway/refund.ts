// POST /v1/refund: up to 50 orders; refunds captured money, partly and many times, never more
// than was captured. A refund is accepted now (refund_status 1) and settles later: processed (2)
// or failed (3), when the scenario says (default: processed after DEFAULT_REFUND_DELAY_SECONDS).
import { codes } from "../domain/codes.js";
import { orderOutcome } from "../domain/outcomes.js";
import { refund as refundTransaction, Refusal } from "../domain/lifecycle.js";
import { notifyRefund } from "./notifying.js";
import { batchOperation } from "./batch.js";
import { refundOrder } from "./batch-orders.js";

const DEFAULT_REFUND_DELAY_SECONDS = 5;

export const refund = batchOperation({
  name: "refund",
  order: refundOrder,
  statusField: "refund_status",
  messageField: "refund_message",
  successMessage: "refund_accepted",
  echo: ["refund_amount", "refund_reason", "refund_reference", "refund_reference_id"],
  apply(order, tx, { caller, now }, deps, decision) {
    // the rule's own `then.refund` wins over what its named outcome implies
    const shape = { ...orderOutcome("refund", decision.outcome)?.refund, ...decision.then.refund };
    const plan = { afterSeconds: shape.after_seconds ?? DEFAULT_REFUND_DELAY_SECONDS, fate: shape.result ?? "processed" };
    const { records } = deps.store;
    const accepted = refundTransaction(
      tx,
      { ...order, refund_reason: order.refund_reason ?? "" },
      caller.account,
      plan,
      records.refundsOf(tx.transaction_id),
      now,
    );
    if (accepted instanceof Refusal) return accepted;
    // the rule's notification behaviour also applies when the refund settles later
    if (decision.then.notify) accepted.notify = decision.then.notify;
    records.addRefund(accepted);
    notifyRefund(deps, accepted, tx, accepted.notify);
    return {
      status: codes.refund_status.accepted,
      fields: {
        refund_amount: accepted.refund_amount,
        refund_reason: accepted.refund_reason,
        refund_reference: accepted.refund_reference,
        refund_reference_id: accepted.refund_reference_id,
      },
    };
  },
});

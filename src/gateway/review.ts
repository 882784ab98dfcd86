// POST /v1/review: up to 100 orders; review_flag approves or rejects a payment held for review.
import { Refusal, review as reviewTransaction, type ReviewDecision } from "../domain/lifecycle.js";
import { settleWaitingRequest } from "../domain/payment.js";
import { batchOperation } from "./batch.js";
import { reviewOrder } from "./batch-orders.js";

/** Accepted review_flag values (case-insensitive); README lists them. */
const REVIEW_FLAGS: Record<ReviewDecision, readonly string[]> = {
  approve: ["1", "approve", "approved", "accept", "pass"],
  reject: ["0", "reject", "rejected", "decline", "refuse"],
};

function decisionOf(flag: string): ReviewDecision | undefined {
  const f = flag.trim().toLowerCase();
  return (Object.keys(REVIEW_FLAGS) as ReviewDecision[]).find((d) => REVIEW_FLAGS[d].includes(f));
}

export const review = batchOperation({
  name: "review",
  order: reviewOrder,
  statusField: "review_status",
  messageField: "error_message",
  echo: ["review_flag"],
  apply(order, tx, { caller, now }, deps) {
    const decision = decisionOf(order.review_flag);
    if (!decision) {
      const accepted = [...REVIEW_FLAGS.approve, ...REVIEW_FLAGS.reject].join(", ");
      return new Refusal("invalid_review_flag", `"${order.review_flag}" is not one of ${accepted}`);
    }
    const refused = reviewTransaction(tx, order.amount, decision, caller.account, now);
    if (refused) return refused;
    // an approved payment starts the subscription its request carried
    settleWaitingRequest(deps.store.records, tx, now, deps.store.ids);
    return {};
  },
  event: (order) => (decisionOf(order.review_flag) === "approve" ? "payment.review_approved" : "payment.review_rejected"),
});

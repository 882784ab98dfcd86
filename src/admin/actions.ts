// What an operator can make happen, once: the JSON API (/__sandbox/...) and the dashboard's forms
// both call these and only differ in how they answer. Each returns the changed record, or a
// problem (HTTP status, error name, message) that changed nothing.
import { codes } from "../domain/codes.js";
import type { Deps } from "../deps/deps.js";
import { choicesText, resolveOutcome, stageOf } from "../domain/completion.js";
import { settleRefund } from "../domain/lifecycle.js";
import { failureReason, settlePayout } from "../domain/payout-rules.js";
import { hasDeduction } from "../domain/subscription-schedule.js";
import { notifyPayout } from "../notify/payout-notice.js";
import { notifyRefund } from "../gateway/notifying.js";
import { finishPayment } from "../pages/finish.js";
import type { Payout, Refund, Subscription, Transaction } from "../domain/types.js";
import { bringUpToDate } from "../schedule/scheduler.js";
import { completeBody, failPayoutBody, resetBody, settleBody } from "../api/operator-bodies.js";

interface Problem {
  status: number;
  error: string;
  message: string;
  /** what the refusal is about, beside error and message (a portal action's request_id) */
  about?: Record<string, unknown>;
}
export type Done<T> = { value: T } | { problem: Problem };

export const problem = (status: number, error: string, message: string): { problem: Problem } => ({ problem: { status, error, message } });

const RESET_FORMS = 'send {"merchant_id": "<id>"} to reset one merchant, or {"all": true} to reset every merchant';

/** Back to fixtures: `{all: true}` everything, `{merchant_id}` one merchant's records (and its nth-call counters). */
export async function resetState(deps: Deps, body: unknown): Promise<Done<{ reset: string }>> {
  const parsed = resetBody.safeParse(body ?? {});
  if (!parsed.success) {
    const id = (body as { merchant_id?: unknown } | null)?.merchant_id;
    const what =
      id === undefined
        ? "this body resets nothing"
        : typeof id !== "string"
          ? "merchant_id must be a string"
          : id === ""
            ? "merchant_id is empty"
            : "this body resets nothing";
    return problem(400, "invalid_reset", `${what}: ${RESET_FORMS}; nothing was reset`);
  }
  const one = "merchant_id" in parsed.data ? parsed.data.merchant_id : undefined;
  if (one !== undefined && !deps.store.records.merchant(one)) {
    return problem(400, "unknown_merchant", `Sandgate knows no merchant ${one} (a fixture's, or one that made a request): ${RESET_FORMS}; nothing was reset`);
  }
  await deps.store.reset(one);
  deps.scenarios.resetCounters(one);
  return { value: { reset: one ?? "all" } };
}

/** Finishes a pending payment as its payer would at its page. */
export async function completePaymentNow(deps: Deps, transactionId: string, chosen: unknown, path: string, ip: string): Promise<Done<Transaction>> {
  await bringUpToDate(deps);
  const tx = deps.store.records.transaction(transactionId);
  if (!tx) return problem(404, "transaction_not_found", `no transaction ${transactionId}`);
  const stage = stageOf(tx);
  if (!stage)
    return problem(
      409,
      "payment_not_pending",
      `payment ${tx.transaction_id} is ${tx.state} (${codes.payment_status[tx.state]}): only a pending payment can be completed`,
    );
  const named = completeBody.shape.outcome.safeParse(chosen);
  const outcome = named.success ? resolveOutcome(stage, named.data) : undefined;
  if (!named.success || !outcome) {
    return problem(400, "invalid_outcome", `send {"outcome": one of the ${stage} page's} — ${choicesText(stage)}`);
  }
  const refusal = await finishPayment(deps, tx, { outcome, chosen: named.data, rule: `operator/${named.data}`, source: "operator", path, ip });
  if (refusal) return problem(409, "payment_not_pending", refusal.info);
  return { value: tx };
}

/** Settles an accepted refund now, processed or failed. */
export async function settleRefundNow(deps: Deps, reference: string, chosen: unknown): Promise<Done<Refund>> {
  const parsed = settleBody.shape.result.safeParse(chosen);
  if (!parsed.success) return problem(400, "invalid_result", 'result must be "processed" or "failed"');
  const result = parsed.data;
  const { store } = deps;
  const refund = store.records.refund(reference);
  if (!refund) return problem(404, "refund_not_found", `no refund ${reference}`);
  if (refund.state !== "accepted") return problem(409, "refund_settled", `refund ${refund.refund_reference_id} is already ${refund.state}`);
  const tx = store.records.transaction(refund.transaction_id);
  settleRefund(refund, tx, result, store.records.nowOf(refund.merchant_id, deps.clock.now()), store.ids, "operator");
  store.records.changed("refunds", refund);
  if (tx) store.records.changed("transactions", tx);
  notifyRefund(deps, refund, tx, refund.notify);
  await store.commit();
  return { value: refund };
}

/** Completes or fails a PENDING payout now; `failure` as sent ({failure_type, failure_reason}, both optional). */
export async function settlePayoutNow(deps: Deps, id: string, to: "COMPLETED" | "FAILED", raw: unknown = {}): Promise<Done<Payout>> {
  const parsed = failPayoutBody.safeParse(raw ?? {});
  const bad = parsed.success ? undefined : parsed.error.issues[0]!.path[0];
  const failure = parsed.success ? parsed.data : {};
  const type = failure.failure_type || "UNKNOWN";
  if (to === "FAILED" && (bad === "failure_type" || !codes.payout_failure_types.includes(type))) {
    return problem(400, "invalid_failure_type", `failure_type must be one of ${codes.payout_failure_types.join(", ")}`);
  }
  if (bad === "failure_reason") return problem(400, "invalid_failure_reason", "failure_reason must be a string");
  await bringUpToDate(deps);
  const p = deps.store.records.payout(id);
  if (!p) return problem(404, "payout_not_found", `no payout ${id}`);
  const reason = (failure.failure_reason as string | undefined) || failureReason(type as string);
  const refused = settlePayout(
    p,
    to,
    to === "FAILED" ? { type: type as string, reason } : undefined,
    deps.store.records.nowOf(p.merchant_id, deps.clock.now()),
  );
  if (refused) return problem(409, "payout_final", `${refused}: only PENDING payouts move`);
  deps.store.records.changed("payouts", p);
  notifyPayout(p, deps.notifier, deps.store, p.notify);
  await deps.store.commit();
  return { value: p };
}

/** Makes an active subscription's next deduction now (the schedule after it is unchanged). */
export async function chargeSubscriptionNow(deps: Deps, recurringId: string): Promise<Done<Subscription>> {
  await bringUpToDate(deps);
  const sub = deps.store.records.subscription(recurringId);
  if (!sub) return problem(404, "subscription_not_found", `no subscription ${recurringId}`);
  if (sub.state !== "active" || !hasDeduction(sub, sub.deductions + 1)) {
    return problem(409, "subscription_not_active", `subscription ${recurringId} is ${sub.state}: nothing to charge`);
  }
  const now = deps.store.records.nowOf(sub.merchant_id, deps.clock.now()).toISOString();
  if (sub.next_deduction_at > now) {
    sub.next_deduction_at = now;
    deps.store.records.scheduleSubscription(sub);
    deps.store.records.changed("subscriptions", sub);
  }
  await bringUpToDate(deps);
  return { value: sub };
}

// Pure lifecycle steps on one transaction: capture, cancel, review, refund, and refund settlement.
// Each checks the transitions table first, then the amounts, and either changes the transaction
// or returns a Refusal whose text names the reason and the numbers.
import { resultInfo, type PaymentState, codes } from "./codes.js";
import type { Ids } from "./ids.js";
import type { Account, Refund, Transaction } from "./types.js";
import type { Repository } from "./records.js";
import { isoOf } from "./dates.js";
import { recordHistory } from "./history.js";
import { fromCents, toCents } from "./money.js";
import { transition, type Action } from "./transitions.js";

const MAX_REFUNDS = 99;

export class Refusal {
  constructor(
    readonly key: string,
    readonly detail: string,
  ) {}
  get info(): string {
    return resultInfo(this.key, this.detail);
  }
}

export interface OrderIdentity {
  transaction_id: string;
  order_no: string;
  currency: string;
}

/** The transaction an order names, if it is the caller's and the order's identity fields agree. */
export function findOrderTransaction(
  records: Pick<Repository, "transaction">,
  merchantId: string,
  accountId: string,
  order: OrderIdentity,
): Transaction | Refusal {
  const found = records.transaction(order.transaction_id);
  const tx = found?.merchant_id === merchantId && found.account_id === accountId ? found : undefined;
  if (!tx) return new Refusal("transaction_not_found", `no transaction ${order.transaction_id} for merchant ${merchantId} account ${accountId}`);
  if (tx.order_no !== order.order_no) {
    return new Refusal("order_mismatch", `transaction ${tx.transaction_id} belongs to order_no ${tx.order_no}, not ${order.order_no}`);
  }
  if (tx.currency !== order.currency.toUpperCase()) {
    return new Refusal("currency_mismatch", `transaction ${tx.transaction_id} is in ${tx.currency}, not ${order.currency}`);
  }
  return tx;
}

const describe = (tx: Transaction) => `payment ${tx.transaction_id} is ${tx.state} (${codes.payment_status[tx.state]})`;

/** The cell of the transitions table, as a next state or a refusal naming the current state. */
export function step(tx: Transaction, action: Action, account: Account): PaymentState | Refusal {
  const cell = transition(tx.state, action);
  if ("refuse" in cell) return new Refusal(cell.refuse, `${action} refused: ${describe(tx)}`);
  if (cell.to === "approved") return account.capture_mode === "auto" ? "paid" : "authorised";
  return cell.to;
}

function sameAmount(tx: Transaction, amount: string): Refusal | undefined {
  if (toCents(amount) === toCents(tx.amount)) return undefined;
  return new Refusal("amount_mismatch", `amount ${fromCents(toCents(amount))} differs from the transaction's ${tx.amount}`);
}

export function move(tx: Transaction, next: PaymentState, now: Date): void {
  tx.state = next;
  tx.updated_at = isoOf(now);
}

export function capture(tx: Transaction, amount: string, account: Account, now: Date): Refusal | undefined {
  const next = step(tx, "capture", account);
  if (next instanceof Refusal) return next;
  if (toCents(amount) <= 0) return new Refusal("invalid_order", "a capture amount must be greater than 0.00");
  if (toCents(amount) > toCents(tx.amount)) {
    return new Refusal("capture_exceeds", `capture ${fromCents(toCents(amount))} exceeds authorised ${tx.amount}`);
  }
  tx.captured_amount = fromCents(toCents(amount));
  move(tx, next, now);
  return undefined;
}

export function cancel(tx: Transaction, amount: string, account: Account, now: Date): Refusal | undefined {
  const next = step(tx, "cancel", account);
  if (next instanceof Refusal) return next;
  const mismatch = sameAmount(tx, amount);
  if (mismatch) return mismatch;
  move(tx, next, now);
  return undefined;
}

export type ReviewDecision = "approve" | "reject";

export function review(tx: Transaction, amount: string, decision: ReviewDecision, account: Account, now: Date): Refusal | undefined {
  const next = step(tx, decision, account);
  if (next instanceof Refusal) return next;
  const mismatch = sameAmount(tx, amount);
  if (mismatch) return mismatch;
  if (next === "paid") tx.captured_amount = tx.amount;
  move(tx, next, now);
  return undefined;
}

export interface RefundRequest {
  amount: string;
  refund_amount: string;
  refund_reason: string;
}

export interface RefundPlan {
  /** seconds after acceptance when the refund settles */
  afterSeconds: number;
  fate: "processed" | "failed";
}

/** Accepts a refund: reserves the amount at once, so concurrent refunds can never exceed the capture. */
export function refund(tx: Transaction, order: RefundRequest, account: Account, plan: RefundPlan, earlier: readonly Refund[], now: Date): Refund | Refusal {
  const next = step(tx, "refund", account);
  if (next instanceof Refusal) return next;
  const mismatch = sameAmount(tx, order.amount);
  if (mismatch) return mismatch;
  const asked = toCents(order.refund_amount);
  if (asked <= 0) return new Refusal("invalid_order", "refund_amount must be greater than 0.00");
  const refundable = toCents(tx.captured_amount) - toCents(tx.refunded_amount);
  if (asked > refundable) {
    return new Refusal("refund_exceeds", `refund ${fromCents(asked)} exceeds refundable ${fromCents(refundable)}`);
  }
  const sequence = earlier.length + 1;
  // refund_reference_id is <transaction_id>-<two digits>: 99 refunds per payment at most
  if (sequence > MAX_REFUNDS) return new Refusal("too_many_refunds", `payment ${tx.transaction_id} already has ${MAX_REFUNDS} refunds`);
  tx.refunded_amount = fromCents(toCents(tx.refunded_amount) + asked);
  move(tx, refundedState(tx), now);
  return refundOf(tx, sequence, {
    refund_reference: "",
    refund_amount: fromCents(asked),
    refund_reason: order.refund_reason,
    state: "accepted",
    refund_date: now.toISOString(),
    refund_processing_date: "",
    due_at: new Date(now.getTime() + plan.afterSeconds * 1000).toISOString(),
    fate: plan.fate,
  });
}

/** What a refund says of itself; the rest is the payment's (its ids, order, currency and amount). */
type RefundOwn = Pick<Refund, "refund_reference" | "refund_amount" | "refund_reason" | "state" | "refund_date" | "refund_processing_date" | "due_at" | "fate">;

/** The payment's `sequence`-th refund (refund_reference_id <transaction_id>-<two digits>). */
export function refundOf(tx: Transaction, sequence: number, own: RefundOwn): Refund {
  return {
    refund_reference_id: `${tx.transaction_id}-${String(sequence).padStart(2, "0")}`,
    refund_reference: own.refund_reference,
    transaction_id: tx.transaction_id,
    merchant_id: tx.merchant_id,
    account_id: tx.account_id,
    order_no: tx.order_no,
    currency: tx.currency,
    amount: tx.amount,
    refund_amount: own.refund_amount,
    refund_reason: own.refund_reason,
    state: own.state,
    refund_date: own.refund_date,
    refund_processing_date: own.refund_processing_date,
    due_at: own.due_at,
    fate: own.fate,
  };
}

function refundedState(tx: Transaction): PaymentState {
  const refunded = toCents(tx.refunded_amount);
  if (refunded === 0) return "paid";
  return refunded >= toCents(tx.captured_amount) ? "refunded" : "partially_refunded";
}

/** Settles an accepted refund: processed keeps the money refunded; failed gives it back to the payment. */
export function settleRefund(
  r: Refund,
  tx: Transaction | undefined,
  fate: "processed" | "failed",
  now: Date,
  ids: Ids,
  source: "clock" | "operator" = "clock",
): void {
  if (r.state !== "accepted") return;
  r.state = fate;
  r.refund_processing_date = now.toISOString();
  if (fate === "processed") r.refund_reference = ids.digits("arn", 15, "ARN");
  if (fate === "failed" && tx) {
    tx.refunded_amount = fromCents(toCents(tx.refunded_amount) - toCents(r.refund_amount));
    move(tx, refundedState(tx), now);
  }
  if (tx) {
    const result = fate === "processed" ? resultInfo("refund_processed") : resultInfo("refund_failed_later");
    recordHistory(tx, now, {
      event: `refund ${r.refund_reference_id} ${fate}`,
      result,
      rule: source === "operator" ? "operator/settle" : "clock/refund-due",
      source,
    });
  }
}

/** Settles every accepted refund whose time has come (the repository's due queue); returns how many changed. `onSettled` hears of each (e.g. to notify). */
export function settleDueRefunds(
  records: Pick<Repository, "dueRefund" | "transaction" | "nowOf">,
  now: Date,
  ids: Ids,
  onSettled?: (refund: Refund, tx: Transaction | undefined) => void,
): number {
  let changed = 0;
  for (let r = records.dueRefund(now); r; r = records.dueRefund(now)) {
    const tx = records.transaction(r.transaction_id);
    // dated by the merchant's own clock
    settleRefund(r, tx, r.fate, records.nowOf(r.merchant_id, now), ids);
    onSettled?.(r, tx);
    changed++;
  }
  return changed;
}

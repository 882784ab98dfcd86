// Pure payment logic: from a validated request, the chosen outcome and `now`, the transaction
// (and subscription) to store. Its history: domain/history.ts; its amounts: domain/money.ts. No
// Express, no store, no clock of its own.
import { codes, resultInfo, type PaymentState } from "./codes.js";
import { catalogue, type PaymentOutcome } from "./outcomes.js";
import { DELIVERY_FIELDS, deliveryOf, NO_DELIVERY } from "./delivery.js";
import type { Ids } from "./ids.js";
import type { Account, DeliveryInformation, PaymentKind, RequestSource, Subscription, SubscriptionTerms, Transaction } from "./types.js";
import type { Repository } from "./records.js";
import { isoOf, type Interval } from "./dates.js";
import { deductionTime, hasDeduction } from "./subscription-schedule.js";
import { historyEntry } from "./history.js";
import { formatAmount } from "./money.js";
import { intern } from "./text-pool.js";

export interface NewPayment {
  kind: PaymentKind;
  merchantId: string;
  account: Account;
  fields: Record<string, string>;
  outcome: PaymentOutcome;
  cardMasked: string;
  tokenId: string;
  pageId: string;
  now: Date;
  /** the rule that decided it and the request that made it, for the transaction's history */
  rule?: string;
  requestId?: string;
  /** who sent the request (default: a merchant's server) */
  source?: RequestSource;
}

function paymentState(outcome: PaymentOutcome, account: Account): PaymentState {
  switch (outcome.state) {
    case "approved":
      return account.capture_mode === "auto" ? "paid" : "authorised";
    case "declined":
      return "declined";
    case "pending":
      return "pending";
    case "review":
      return "review";
    case "cancelled":
      return "cancelled";
  }
}

export function orderStatus(outcome: PaymentOutcome): string {
  const map = { approved: "success", declined: "failure", pending: "pending", review: "review", cancelled: "failure" } as const;
  return codes.order_status[map[outcome.state]];
}

/** A payment's delivery from its request; the shared empty one when none was sent. */
const delivery = (f: Record<string, string>): DeliveryInformation => (DELIVERY_FIELDS.every((k) => !f[k]) ? NO_DELIVERY : deliveryOf(f));

export function createTransaction(p: NewPayment, ids: Ids): Transaction {
  const transactionId = ids.digits("transaction", 16);
  const state = paymentState(p.outcome, p.account);
  const risk = catalogue.risk[p.outcome.risk];
  const amount = intern(formatAmount(p.fields.amount!));
  const at = isoOf(p.now);
  const tx: Transaction = {
    transaction_id: transactionId,
    merchant_id: intern(p.merchantId),
    account_id: p.account.account_id,
    order_no: p.fields.order_no!,
    kind: p.kind,
    currency: intern(p.fields.currency!.toUpperCase()),
    amount,
    state,
    result: p.outcome.result,
    reference_no: ids.digits("reference", 12, "RN"),
    website: intern(p.fields.website || p.fields["the service"] || ""),
    card_masked: intern(p.cardMasked),
    token_id: p.tokenId,
    payment_method: intern(p.fields.payment_method || (p.kind === "apm" ? "" : "card")),
    connector: p.account.connector,
    note: p.fields.note ?? "",
    shopper_email: p.fields.shopper_email ?? "",
    shopper_phone: p.fields.shopper_phone ?? "",
    delivery: delivery(p.fields),
    is3ds: p.outcome.threeds !== "none",
    threeds_result: catalogue.threeds_results[p.outcome.threeds],
    risk_action: p.outcome.risk,
    risk_score: ids.intFor(`risk|${transactionId}`, risk.score[0], risk.score[1]),
    // shared with the catalogue (frozen there): 100,000 payments do not need 100,000 copies
    risk_reasons: risk.reasons,
    antifraud_provider: catalogue.antifraud_provider,
    notify_url: p.fields.notify_url ?? "",
    return_url: p.fields.return_url ?? "",
    page_id: p.pageId,
    recurring_id: "",
    captured_amount: state === "paid" ? amount : "0.00",
    refunded_amount: "0.00",
    created_at: at,
    updated_at: at,
    history: [
      historyEntry(state, at, {
        event: p.kind === "recurring" ? "created (subscription deduction)" : `created (${p.kind} payment)`,
        result: resultInfo(p.outcome.result),
        rule: p.rule ?? "",
        source: p.kind === "recurring" ? "clock" : (p.source ?? "api"),
        request_id: p.requestId,
      }),
    ],
    // set while the payment waits for its payer; here so every payment has one shape
    payer_request: undefined,
  };
  return tx;
}

/** order_status of a payment as it is now (the payer's return and the operator's completion say it). */
export function orderStatusOf(state: PaymentState): string {
  if (state === "pending") return codes.order_status.pending;
  if (state === "review") return codes.order_status.review;
  return state === "declined" || state === "cancelled" ? codes.order_status.failure : codes.order_status.success;
}

/** The subscription a successful first payment starts; the first payment is deduction 1. */
export function createSubscription(t: Transaction, terms: SubscriptionTerms, now: Date, ids: Ids): Subscription {
  const interval = (terms.interval || "month") as Interval;
  const count = Number(terms.interval_count || "1");
  const sub: Subscription = {
    recurring_id: ids.digits("recurring", 14, "R"),
    merchant_id: t.merchant_id,
    account_id: t.account_id,
    order_no: t.order_no,
    transaction_id: t.transaction_id,
    token_id: t.token_id,
    contract: terms.contract ?? "",
    contract_name: terms.contract_name ?? "",
    contract_amount: formatAmount(terms.contract_amount || t.amount),
    currency: t.currency,
    interval,
    interval_count: count,
    billing_cycle: terms.billing_cycle ?? 0,
    promotion_cycle: terms.promotion_cycle ?? 0,
    contract_start: terms.contract_start ?? "",
    contract_end: terms.contract_end ?? "",
    price_id: terms.price_id ?? "",
    state: "active",
    deductions: 1,
    next_deduction_at: "",
    created_at: now.toISOString(),
  };
  // a schedule without a second charge (billing_cycle 1, contract_end too close) is over at once
  sub.next_deduction_at = deductionTime(sub, 2).toISOString();
  if (!hasDeduction(sub, 2)) sub.state = "finished";
  return sub;
}

/**
 * A payment that waited (for its payer, or a reviewer) and has now succeeded starts the subscription
 * its request carried, charged later to the card kept on file. Whatever waited is dropped once the
 * payment no longer waits.
 */
export function settleWaitingRequest(records: Pick<Repository, "addSubscription">, tx: Transaction, now: Date, ids: Ids): void {
  const waiting = tx.payer_request;
  if (!waiting) return;
  if ((tx.state === "authorised" || tx.state === "paid") && waiting.subscription && !tx.recurring_id) {
    const sub = createSubscription(tx, waiting.subscription, now, ids);
    sub.token_id ||= waiting.card_token ?? "";
    tx.recurring_id = sub.recurring_id;
    records.addSubscription(sub);
  }
  if (tx.state !== "pending" && tx.state !== "review") delete tx.payer_request;
}

/** "1 month", "2 week": how often the subscription is charged */
export const deductionPeriod = (s: Pick<Subscription, "interval" | "interval_count">) => `${s.interval_count} ${s.interval}`;

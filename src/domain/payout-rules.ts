// Payouts, pure: the fee and FX quote (integer cents, half-up rounding), the status a scenario
// rule gives, the PENDING → COMPLETED | FAILED transitions, and the idempotency comparison.
import type { Repository } from "./records.js";
import type { Ids } from "./ids.js";
import type { Payout, PayoutStatus } from "./types.js";
import { catalogue } from "./outcomes.js";
import { flattenFields, type PayoutFields } from "./payout-fields.js";
import { fromCents } from "./money.js";

/** fixtures/payout-pricing.json: FX rates, fees per payment_method, clearing systems. */
export interface PayoutPricing {
  /** units of each currency per one unit of `base`, as decimal strings (up to 6 places) */
  fx: { base: string; rates: Record<string, string> };
  /** per payment_method: a fixed part (in fixed_currency, converted) plus a percent of the principal */
  fees: Record<string, { fixed: string; fixed_currency: string; percent: string }>;
  /** bank_details.local_clearing_system: by bank_country_code, else by the account's currency */
  clearing_systems: { countries: Record<string, string>; currencies: Record<string, string> };
}

export type FeePaidBy = "PAYER" | "BENEFICIARY";

export interface QuoteInput {
  method: string;
  feePaidBy: FeePaidBy;
  /** the beneficiary's currency */
  paymentCurrency: string;
  /** the payer's currency */
  sourceCurrency: string;
  /** exactly one of the two amounts, as decimal strings */
  paymentAmount: string;
  sourceAmount: string;
}

/** The response's numbers, in cents. */
export interface Quote {
  beneficiaryReceives: number;
  payerPays: number;
  fee: number;
  feeCurrency: string;
  /** said in the request log: both amounts were sent and they disagree with the FX table's rate */
  note?: string;
}

export interface QuoteProblem {
  field: string;
  message: string;
}

const SCALE = 1_000_000n;

/** "0.92" → 920000n: a decimal string with up to six places as an integer of millionths. */
function millionths(decimal: string): bigint {
  const [whole = "0", frac = ""] = decimal.split(".");
  return BigInt(whole) * SCALE + BigInt(frac.padEnd(6, "0").slice(0, 6));
}

/** a × b / c, rounded half up (all non-negative). */
const mulDiv = (a: bigint, b: bigint, c: bigint): bigint => (2n * a * b + c) / (2n * c);

const cents = (amount: string): bigint => millionths(amount) / 10_000n;

/** Converts cents between two currencies of the table through its base; same currency is unchanged. */
function convert(amountCents: bigint, from: string, to: string, pricing: PayoutPricing): bigint {
  if (from === to) return amountCents;
  const rate = (c: string) => millionths(pricing.fx.rates[c] ?? "0");
  return mulDiv(amountCents, rate(to), rate(from));
}

/** The fee of a payment_method on a principal, in the principal's currency. */
function feeFor(principal: bigint, currency: string, method: string, pricing: PayoutPricing): bigint {
  const fee = pricing.fees[method];
  if (!fee) return 0n;
  const fixed = convert(cents(fee.fixed), fee.fixed_currency, currency, pricing);
  return fixed + mulDiv(principal, millionths(fee.percent), 100n * SCALE);
}

/**
 * payment_amount fixes the beneficiary's side, source_amount the payer's; the other side is
 * converted at the table's rate. When both are sent, payment_amount decides. The fee is charged in the currency of whoever pays it:
 * PAYER → added to what the payer pays (source currency); BENEFICIARY → deducted from what the
 * beneficiary receives (payment currency).
 */
export function quotePayout(input: QuoteInput, pricing: PayoutPricing): Quote | QuoteProblem {
  const { paymentCurrency: P, sourceCurrency: S } = input;
  const byPayment = input.paymentAmount !== "";
  const p = byPayment ? cents(input.paymentAmount) : convert(cents(input.sourceAmount), S, P, pricing);
  const s = byPayment ? convert(p, P, S, pricing) : cents(input.sourceAmount);
  if (p === 0n || s === 0n) {
    const field = byPayment ? "payment_amount" : "source_amount";
    return { field, message: `converts to 0.00 ${byPayment ? S : P} at the FX table's rate: send a larger amount` };
  }
  // both sent: payment_amount decides; a source_amount the rate does not give is noted, not refused
  const sent = byPayment && input.sourceAmount !== "" ? cents(input.sourceAmount) : s;
  const note =
    sent === s
      ? {}
      : {
          note: `source_amount ${fromCents(Number(sent))} ${S} disagrees with the FX table: payment_amount ${fromCents(Number(p))} ${P} is ${fromCents(Number(s))} ${S}; payment_amount decides`,
        };
  if (input.feePaidBy === "PAYER") {
    const fee = feeFor(s, S, input.method, pricing);
    return { beneficiaryReceives: Number(p), payerPays: Number(s + fee), fee: Number(fee), feeCurrency: S, ...note };
  }
  const fee = feeFor(p, P, input.method, pricing);
  if (fee >= p) {
    const field = byPayment ? "payment_amount" : "source_amount";
    return {
      field,
      message: `${fromCents(Number(p))} ${P} does not cover the ${input.method} fee of ${fromCents(Number(fee))} ${P} that the beneficiary pays`,
    };
  }
  return { beneficiaryReceives: Number(p - fee), payerPays: Number(s), fee: Number(fee), feeCurrency: P, ...note };
}

/** bank_details.local_clearing_system: the bank's country first, then the account's currency. */
export function clearingSystem(pricing: PayoutPricing, bankCountry: string, currency: string): string {
  const { countries, currencies } = pricing.clearing_systems;
  return countries[bankCountry.toUpperCase()] ?? currencies[currency.toUpperCase()] ?? "";
}

/** A scenario rule's `then.payout`. */
export interface PayoutRule {
  status?: PayoutStatus;
  failure_type?: string;
  failure_reason?: string;
  after_seconds?: number;
  then?: "COMPLETED" | "FAILED";
}

export type PayoutPlan = Pick<Payout, "status" | "failure_type" | "failure_reason" | "due_at" | "next_status" | "next_failure_type" | "next_failure_reason">;

/** The failure_reason text of a failure_type (data/outcomes.json payout.failure_reasons). */
export function failureReason(type: string): string {
  const reasons = catalogue.payout.failure_reasons;
  return reasons[type] ?? `${reasons.UNKNOWN ?? "The payout failed"} (${type})`;
}

const failure = (rule: PayoutRule) => {
  const type = rule.failure_type || "UNKNOWN";
  return { type, reason: rule.failure_reason || failureReason(type) };
};

/** What a rule makes of a new payout: COMPLETED by default; PENDING moves on after_seconds later (or by operator). */
export function planPayout(rule: PayoutRule | undefined, now: Date): PayoutPlan {
  const none = { failure_type: "", failure_reason: "", due_at: "", next_status: "", next_failure_type: "", next_failure_reason: "" } as const;
  const status = rule?.status ?? "COMPLETED";
  if (!rule || status === "COMPLETED") return { ...none, status: "COMPLETED" };
  if (status === "FAILED") {
    const f = failure(rule);
    return { ...none, status, failure_type: f.type, failure_reason: f.reason };
  }
  const next = rule.then ?? "COMPLETED";
  const f = next === "FAILED" ? failure(rule) : { type: "", reason: "" };
  const due = rule.after_seconds === undefined ? "" : new Date(now.getTime() + rule.after_seconds * 1000).toISOString();
  return { ...none, status, due_at: due, next_status: next, next_failure_type: f.type, next_failure_reason: f.reason };
}

/** Moves a PENDING payout to COMPLETED or FAILED; returns why not when it is already final. */
export function settlePayout(p: Payout, to: "COMPLETED" | "FAILED", fail: { type: string; reason: string } | undefined, now: Date): string | undefined {
  if (p.status !== "PENDING") return `payout ${p.transaction_id} is already ${p.status}`;
  p.status = to;
  p.failure_type = to === "FAILED" ? (fail?.type ?? "UNKNOWN") : "";
  p.failure_reason = to === "FAILED" ? (fail?.reason ?? failureReason(p.failure_type)) : "";
  p.due_at = "";
  p.next_status = "";
  p.next_failure_type = "";
  p.next_failure_reason = "";
  p.last_updated_at = now.toISOString();
  return undefined;
}

/** Settles every PENDING payout whose due time has passed, the way its rule said, and notifies; returns how many. */
export function settleDuePayouts(records: Pick<Repository, "duePayout" | "nowOf">, now: Date, onSettled: (payout: Payout) => void): number {
  let settled = 0;
  for (let p = records.duePayout(now); p; p = records.duePayout(now)) {
    const to = p.next_status === "FAILED" ? "FAILED" : "COMPLETED";
    const type = p.next_failure_type || "UNKNOWN";
    // dated by the merchant's own clock
    settlePayout(p, to, { type, reason: p.next_failure_reason || failureReason(type) }, records.nowOf(p.merchant_id, now));
    onSettled(p);
    settled++;
  }
  return settled;
}

/** The field paths whose values differ between two requests (for request_id idempotency). */
export function differingFields(a: PayoutFields, b: PayoutFields): string[] {
  const fa = flattenFields(a);
  const fb = flattenFields(b);
  return [...new Set([...Object.keys(fa), ...Object.keys(fb)])].filter((k) => fa[k] !== fb[k]);
}

export interface NewPayout {
  merchantId: string;
  accountId: string;
  request: PayoutFields;
  quote: Quote;
  plan: PayoutPlan;
  clearing: string;
  rule: string;
  now: Date;
}

/** A new payout record: ids from the seeded sequence, short_reference_id prefixed with the date (YYMMDD). */
export function createPayout(input: NewPayout, ids: Ids): Payout {
  const { request, quote, now } = input;
  const iso = now.toISOString();
  const payerKey = `payer|${input.merchantId}|${JSON.stringify(request.payer)}`;
  return {
    transaction_id: ids.digits("payout", 14, "PO"),
    merchant_id: input.merchantId,
    account_id: input.accountId,
    request_id: request.request_id,
    request,
    amount_beneficiary_receives: quote.beneficiaryReceives / 100,
    amount_payer_pays: quote.payerPays / 100,
    fee_amount: quote.fee / 100,
    fee_currency: quote.feeCurrency,
    payer_id: `PY${ids.intFor(payerKey, 100_000_000, 999_999_999)}`,
    short_reference_id: `${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${ids.hex("payout_ref", 6).toUpperCase()}`,
    local_clearing_system: input.clearing,
    ...input.plan,
    rule: input.rule,
    created_at: iso,
    last_updated_at: iso,
  };
}

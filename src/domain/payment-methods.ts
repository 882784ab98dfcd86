// Ranking an account's payment methods for one payment (POST /v1/paymentMethods/optimise), from
// the method profiles in fixtures/payment-methods.json. Pure and deterministic:
//   - A method is suitable when it serves the billing country, the currency, and the amount lies
//     within its minimum and maximum. Suitable methods come first, best score first.
//   - score = approval rate (%) − 5 × fee (% of the amount, fixed part included) − 0.5 × settlement
//     days, never below 0, two decimals. Ties: higher approval, lower fee, the account's order.
//   - Unsuitable methods (and methods without a profile) are still listed, after the suitable
//     ones, in the account's order, with score 0 and a reason that says what rules them out.
import { fromCents, toCents } from "./money.js";

/** One method's profile, as fixtures/payment-methods.json describes it. */
export interface MethodProfile {
  payment_method: string;
  label: string;
  /** funds confirmed while the payer waits (pix, iDEAL, cards) */
  instant: boolean;
  /** two-letter codes; "*" serves every country */
  countries: string[];
  currencies: string[];
  min_amount: string;
  max_amount: string;
  /** percent of payments approved, per country; "*" is the rate anywhere else */
  approval_rate: Record<string, number>;
  /** percent of the amount, as a decimal string ("2.90") */
  fee_percent: string;
  /** fixed part of the fee, in the payment's currency (no FX in the sandbox) */
  fee_fixed: string;
  settlement_days: number;
}

export interface OptimiseQuery {
  currency: string;
  amount: string;
  country: string;
}

export interface RankedMethod {
  payment_method: string;
  rank: number;
  suitable: boolean;
  score: number;
  reason: string;
  label: string;
  /** null for a method without a profile */
  approval_rate: number | null;
  fee_amount: string;
  fee_currency: string;
  settlement_days: number | null;
  instant: boolean;
}

type Unranked = Omit<RankedMethod, "rank"> & { feeCents: number; order: number };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
const settles = (days: number) => (days === 0 ? "settles the same day" : `settles in ${plural(days, "day")}`);
const serves = (list: string[], value: string) => list.includes("*") || list.includes(value);

/** What rules the method out for this payment; empty when it is suitable. */
function unsuitability(p: MethodProfile, q: OptimiseQuery): string[] {
  const reasons: string[] = [];
  const cents = toCents(q.amount);
  if (!serves(p.countries, q.country)) reasons.push(`not available in ${q.country} (only ${p.countries.join(", ")})`);
  if (!serves(p.currencies, q.currency)) reasons.push(`${q.currency} not supported (only ${p.currencies.join(", ")})`);
  if (cents < toCents(p.min_amount)) reasons.push(`amount ${fromCents(cents)} is below the minimum ${p.min_amount}`);
  if (cents > toCents(p.max_amount)) reasons.push(`amount ${fromCents(cents)} is above the maximum ${p.max_amount}`);
  return reasons;
}

function assess(name: string, order: number, p: MethodProfile | undefined, q: OptimiseQuery): Unranked {
  if (!p) {
    const reason = `${name}: not described in payment-methods.json`;
    return {
      payment_method: name,
      suitable: false,
      score: 0,
      reason,
      label: name,
      approval_rate: null,
      fee_amount: "",
      fee_currency: q.currency,
      settlement_days: null,
      instant: false,
      feeCents: 0,
      order,
    };
  }
  const cents = toCents(q.amount);
  const feeCents = Math.round((cents * toCents(p.fee_percent)) / 10_000) + toCents(p.fee_fixed);
  const specific = p.approval_rate[q.country];
  const approval = specific ?? p.approval_rate["*"] ?? 0;
  const base = {
    payment_method: name,
    label: p.label,
    approval_rate: approval,
    fee_amount: fromCents(feeCents),
    fee_currency: q.currency,
    settlement_days: p.settlement_days,
    instant: p.instant,
    feeCents,
    order,
  };
  const problems = unsuitability(p, q);
  if (problems.length) return { ...base, suitable: false, score: 0, reason: `${name}: ${problems.join("; ")}` };

  const feeHundredthsOfPercent = cents > 0 ? Math.round((feeCents * 10_000) / cents) : 0;
  const scoreHundredths = Math.round(approval * 100) - 5 * feeHundredthsOfPercent - 50 * p.settlement_days;
  const where = specific === undefined ? "(all countries)" : `in ${q.country}`;
  const facts = [
    ...(p.instant ? ["instant"] : []),
    `${approval}% approval ${where}`,
    `${q.currency} supported`,
    `fee ${fromCents(feeCents)} ${q.currency} (${fromCents(feeHundredthsOfPercent)}%)`,
    settles(p.settlement_days),
  ];
  return { ...base, suitable: true, score: Math.max(0, scoreHundredths) / 100, reason: `${name}: ${facts.join(", ")}` };
}

function better(a: Unranked, b: Unranked): number {
  if (a.suitable !== b.suitable) return a.suitable ? -1 : 1;
  if (!a.suitable) return a.order - b.order;
  return b.score - a.score || (b.approval_rate ?? 0) - (a.approval_rate ?? 0) || a.feeCents - b.feeCents || a.order - b.order;
}

/** The account's methods, best first, each with its rank (1-based) and reason. */
export function rankPaymentMethods(methods: readonly string[], profiles: readonly MethodProfile[], query: OptimiseQuery): RankedMethod[] {
  const byName = new Map(profiles.map((p) => [p.payment_method, p]));
  return [...new Set(methods)]
    .map((name, order) => assess(name, order, byName.get(name), query))
    .sort(better)
    .map(({ feeCents: _fee, order: _order, payment_method, ...rest }, i) => ({ payment_method, rank: i + 1, ...rest }));
}

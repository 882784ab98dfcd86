// When and how much a subscription charges: pure date and amount rules, shared by the first
// payment (payment.ts) and the deductions that follow (subscriptions.ts).
//   - Deduction 1 is the first payment. Deduction n falls (n - 1) × interval_count intervals after
//     the anchor: contract_start when it is later than the first payment, else the first payment.
//     Counting from the anchor (not from the previous deduction) keeps month ends stable:
//     Jan 31 → Feb 28 → Mar 31.
//   - billing_cycle is the total number of charges, the first payment included; 0 means no limit.
//   - contract_end (a date, 00:00 UTC) ends the schedule: no deduction falls on or after it.
//   - The first promotion_cycle charges cost the first payment's amount; later ones contract_amount.
import type { Subscription } from "./types.js";
import { addInterval, type Interval } from "./dates.js";

export type Schedule = Pick<Subscription, "interval" | "interval_count" | "billing_cycle" | "contract_start" | "contract_end" | "created_at">;

/** A contract date (YYYY-MM-DD, anything after the day ignored) at 00:00 UTC; undefined when empty or not a date. */
function contractDate(text: string): Date | undefined {
  if (!text) return undefined;
  const d = new Date(`${text.slice(0, 10)}T00:00:00.000Z`);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** What deduction 1 counts from. */
function scheduleAnchor(s: Schedule): Date {
  const created = new Date(s.created_at);
  const start = contractDate(s.contract_start);
  return start && start.getTime() > created.getTime() ? start : created;
}

/** The scheduled time of deduction n (n = 1 is the first payment). */
export function deductionTime(s: Schedule, n: number): Date {
  return addInterval(scheduleAnchor(s), s.interval as Interval, s.interval_count * (n - 1));
}

/** Whether the schedule has a deduction n at all (billing_cycle and contract_end allow it). */
export function hasDeduction(s: Schedule, n: number): boolean {
  if (s.billing_cycle > 0 && n > s.billing_cycle) return false;
  const end = contractDate(s.contract_end);
  return !end || deductionTime(s, n).getTime() < end.getTime();
}

/** The amount of deduction n: the promotional (first payment's) amount for the first promotion_cycle charges. */
export function deductionAmount(s: Pick<Subscription, "promotion_cycle" | "contract_amount">, n: number, firstAmount: string): string {
  return n <= s.promotion_cycle ? firstAmount : s.contract_amount;
}

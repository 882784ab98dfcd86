// Subscription deductions and cancellation. Every deduction that falls due by `now` becomes a real
// transaction (kind "recurring") against the card on file, dated at its own scheduled time, in
// time order across all subscriptions, so one big clock jump gives exactly what many small ones
// give. The scenario decides each charge (operation "recurring"); a declined charge suspends the
// subscription; the last charge of the schedule finishes it. Schedule rules: subscription-schedule.ts.
import type { Ids } from "../domain/ids.js";
import type { Notifier, NotifyBehaviour } from "../notify/notifier.js";
import type { SubscriptionEvent } from "../notify/events.js";
import type { Decision, ScenarioRegistry } from "../scenarios/registry.js";
import type { Account, CardToken, Subscription, Transaction } from "../domain/types.js";
import type { Repository } from "../domain/records.js";
import { accountOf } from "../domain/merchants.js";
import { CardOnFile } from "../domain/card-on-file.js";
import { isExpired } from "../domain/card-expiry.js";
import { Refusal } from "../domain/lifecycle.js";
import { paymentOutcome } from "../domain/outcomes.js";
import { createTransaction } from "../domain/payment.js";
import { deductionAmount, deductionTime, hasDeduction } from "../domain/subscription-schedule.js";

/** A subscription changed: tell whoever listens (the scheduler turns it into a notification). */
export type SubscriptionChange = (sub: Subscription, event: SubscriptionEvent, deduction?: Transaction, behaviour?: NotifyBehaviour) => void;

/** What time-driven work needs besides the state: the scenarios that decide, and where events go (Deps has both). */
export interface TimeEffects {
  scenarios: Pick<ScenarioRegistry, "decide">;
  notifier: Pick<Notifier, "emit">;
}

/** "ORD-7-R02": deduction n of the subscription started by order ORD-7. */
const deductionOrderNo = (sub: Subscription, n: number) => `${sub.order_no}-R${String(n).padStart(2, "0")}`;

const firstPayment = (records: Repository, sub: Subscription): Transaction | undefined => {
  const tx = records.transaction(sub.transaction_id);
  return tx?.merchant_id === sub.merchant_id ? tx : undefined;
};

/** Cancels a subscription; refuses one that is already cancelled or finished. */
export function cancelSubscription(sub: Subscription): Refusal | undefined {
  if (sub.state === "cancelled") return new Refusal("subscription_already_cancelled", `subscription ${sub.recurring_id} is already cancelled`);
  if (sub.state === "finished") return new Refusal("subscription_finished", `subscription ${sub.recurring_id} has finished: no deduction is left to cancel`);
  sub.state = "cancelled";
  return undefined;
}

/**
 * Recurring charges get their own id counters: how many deductions fell due depends on the date
 * (the fixture subscription catches up at boot), and that must not shift the ids of payments.
 */
const recurringIds = (ids: Ids): Ids => ({
  ...ids,
  digits: (kind, length, prefix) => ids.digits(`recurring.${kind}`, length, prefix),
  hex: (kind, length, prefix) => ids.hex(`recurring.${kind}`, length, prefix),
});

interface Run {
  records: Repository;
  ids: Ids;
  effects: TimeEffects;
  onChange: SubscriptionChange;
}

/**
 * Makes every deduction due by `now`, each at its own scheduled time, earliest first across all
 * subscriptions (the repository's due queue); returns how many records changed.
 */
export function deductDue(records: Repository, now: Date, ids: Ids, effects: TimeEffects, onChange: SubscriptionChange): number {
  const run: Run = { records, ids, effects, onChange };
  let changed = 0;
  const waiting: Subscription[] = [];
  for (let sub = records.dueSubscription(now); sub; sub = records.dueSubscription(now)) {
    if (deductNext(run, sub)) {
      changed++;
      records.scheduleSubscription(sub);
    } else waiting.push(sub);
  }
  // still due, but waiting (for its first payment, say): looked at again next time
  for (const sub of waiting) records.scheduleSubscription(sub);
  return changed;
}

/** Deduction number deductions + 1, at next_deduction_at; false when the subscription must wait. */
function deductNext(run: Run, sub: Subscription): boolean {
  const { records } = run;
  const notify = (event: SubscriptionEvent, deduction?: Transaction, behaviour?: NotifyBehaviour) => run.onChange(sub, event, deduction, behaviour);
  const at = new Date(sub.next_deduction_at);
  const n = sub.deductions + 1;
  const first = firstPayment(records, sub);
  const account = accountOf(records, sub.merchant_id, sub.account_id);
  // the first payment still waits for the payer or a reviewer: so does the schedule
  if (!account || first?.state === "pending" || first?.state === "review") return false;
  const firstFailed = first?.state === "declined" || first?.state === "cancelled";
  if (firstFailed || !hasDeduction(sub, n)) {
    // a first payment that never went through (3-D Secure failed, review rejected, voided) suspends;
    // a schedule with nothing left finishes
    sub.state = firstFailed ? "suspended" : "finished";
    notify(sub.state === "suspended" ? "subscription.suspended" : "subscription.finished");
    return true;
  }
  const following = deductionTime(sub, n + 1);
  if (!(following.getTime() > at.getTime())) return false; // a broken schedule never loops

  const { tx, notify: asked } = charge(run, sub, n, at, account, first);
  if (tx.state === "declined") {
    sub.state = "suspended";
    notify("subscription.deduction_failed", tx, asked);
    notify("subscription.suspended");
    return true;
  }
  sub.deductions = n;
  sub.next_deduction_at = following.toISOString();
  if (!hasDeduction(sub, n + 1)) sub.state = "finished";
  notify("subscription.deducted", tx, asked);
  if (sub.state === "finished") notify("subscription.finished");
  return true;
}

/**
 * The outcome the scenario in force for the merchant gives deduction n (operation "recurring"):
 * rules see the card on file, the deduction's fields, recurring_id, contract, price_id and
 * `deduction` (its number); "nth call" counts this subscription's deductions.
 */
function decide(effects: TimeEffects, sub: Subscription, n: number, fields: Record<string, string>, token: CardToken): Decision {
  const context = {
    ...fields,
    card: CardOnFile.of(token),
    token_id: token.token_id,
    recurring_id: sub.recurring_id,
    contract: sub.contract,
    price_id: sub.price_id,
    deduction: String(n),
  };
  return effects.scenarios.decide({ operation: "recurring", fields: context, merchantId: sub.merchant_id, orderNo: sub.order_no, fallback: "approved" });
}

/** The recurring transaction of deduction n, decided by the scenario against the card on file. */
function charge(
  { records, ids, effects }: Run,
  sub: Subscription,
  n: number,
  at: Date,
  account: Account,
  first: Transaction | undefined,
): { tx: Transaction; notify: NotifyBehaviour | undefined } {
  const onFile = records.token(sub.token_id);
  const token = onFile?.merchant_id === sub.merchant_id ? onFile : undefined;
  const fields: Record<string, string> = {
    ...(first?.delivery ?? {}),
    order_no: deductionOrderNo(sub, n),
    amount: deductionAmount(sub, n, first?.amount ?? sub.contract_amount),
    currency: sub.currency,
    website: first?.website ?? "",
    shopper_email: first?.shopper_email ?? "",
    shopper_phone: first?.shopper_phone ?? "",
    notify_url: first?.notify_url ?? "",
    payment_method: "card",
  };
  const decision = token && !isExpired(token.expiration_month, token.expiration_year, at) ? decide(effects, sub, n, fields, token) : undefined;
  const outcome = decision?.outcome ?? (token ? "expired_card" : "do_not_honor");
  const tx = createTransaction(
    {
      kind: "recurring",
      merchantId: sub.merchant_id,
      account,
      fields,
      outcome: paymentOutcome(outcome),
      cardMasked: token?.card_masked ?? "",
      tokenId: sub.token_id,
      pageId: "",
      now: at,
      rule: decision?.rule ?? "builtin/no-usable-card-on-file",
    },
    recurringIds(ids),
  );
  tx.recurring_id = sub.recurring_id;
  records.addTransaction(tx);
  return { tx, notify: decision?.then.notify };
}

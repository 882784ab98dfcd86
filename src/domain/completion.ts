// What a payer does at a payer page (3-D Secure challenge, APM page, hosted checkout), as pure
// steps on the payment: the page a pending payment waits at, the outcomes that page offers
// (data/outcomes.json "completion"), and the move an outcome makes through the transitions table.
import type { Ids } from "./ids.js";
import type { Account, Transaction } from "./types.js";
import { move, Refusal, step } from "./lifecycle.js";
import { resultInfo } from "./codes.js";
import { catalogue, type PaymentOutcome } from "./outcomes.js";
import type { Action } from "./transitions.js";

export type Stage = "3ds" | "apm" | "checkout";

/** The page a pending payment waits at; undefined once it is no longer pending. */
export function stageOf(tx: Transaction): Stage | undefined {
  if (tx.state !== "pending") return undefined;
  if (tx.result === "pending_3ds") return "3ds";
  if (tx.kind === "apm") return "apm";
  if (tx.kind === "checkout") return "checkout";
  return "3ds";
}

/** How the payer paid, once known: a hosted checkout still waiting at its page has no method yet (its payer has not chosen). */
export const paidWith = (tx: Pick<Transaction, "state" | "result" | "kind" | "card_masked" | "payment_method">): string | undefined =>
  tx.card_masked || (stageOf(tx as Transaction) === "checkout" ? undefined : tx.payment_method || undefined);

/** An authorise outcome the hosted checkout can end in: anything but waiting without a page. */
const fitsCheckout = (o: PaymentOutcome) => o.state !== "pending" || o.threeds === "challenge" || o.result === "pending_checkout";

/** Outcome names a page takes: its own, and at the hosted checkout every fitting authorise outcome. */
export function stageOutcomes(stage: Stage): string[] {
  const own = Object.keys(catalogue.completion[stage]);
  if (stage !== "checkout") return own;
  const more = Object.entries(catalogue.authorise).filter(([name, o]) => !own.includes(name) && fitsCheckout(o));
  return [...own, ...more.map(([name]) => name)];
}

/** The authorise outcome a page's outcome name stands for, or undefined when the page does not offer it. */
export function resolveOutcome(stage: Stage, name: string): string | undefined {
  const own = catalogue.completion[stage];
  if (Object.hasOwn(own, name)) return own[name];
  if (stage === "checkout" && Object.hasOwn(catalogue.authorise, name) && fitsCheckout(catalogue.authorise[name]!)) return name;
  return undefined;
}

/** What a tester reads beside a choice: the group it is in. */
export type CompletionGroup = "Approve" | "Decline" | "3-D Secure" | "Review" | "The payer leaves or waits";
const GROUPS: readonly CompletionGroup[] = ["Approve", "Decline", "3-D Secure", "Review", "The payer leaves or waits"];

/** One thing a page's payment can end in: its name, the other names that mean the same, and the result_info it gives. */
export interface CompletionChoice {
  name: string;
  /** names a page also takes for it (e.g. threeds_passed for paid at the 3-D Secure page) */
  also: string[];
  result_info: string;
}

/** The names a tester reads first, when a page takes several for one outcome: the words every page shares. */
const PREFERRED = ["paid", "failed", "cancelled", "pending", "expired", "review", "threeds"];

function groupOf(outcome: PaymentOutcome): CompletionGroup {
  if (outcome.threeds !== "none") return "3-D Secure";
  if (outcome.state === "approved") return "Approve";
  if (outcome.state === "declined") return "Decline";
  if (outcome.state === "review") return "Review";
  return "The payer leaves or waits";
}

/**
 * A page's outcomes in words: grouped (approve, decline with its code and text, 3-D Secure, review,
 * what the payer does), each outcome once under its plainest name, with the names that mean the
 * same beside it and the result_info it gives. The dashboard's buttons, ctl's help and the
 * operator API's refusal say the same.
 */
export function completionChoices(stage: Stage): { group: CompletionGroup; choices: CompletionChoice[] }[] {
  const own = Object.keys(catalogue.completion[stage]);
  const byTarget = new Map<string, string[]>();
  for (const name of stageOutcomes(stage)) {
    const target = resolveOutcome(stage, name)!;
    byTarget.set(target, [...(byTarget.get(target) ?? []), name]);
  }
  const rank = (name: string) => (PREFERRED.includes(name) ? PREFERRED.indexOf(name) : own.includes(name) ? PREFERRED.length : PREFERRED.length + 1);
  const groups = new Map<CompletionGroup, CompletionChoice[]>();
  for (const [target, names] of byTarget) {
    const [name, ...also] = [...names].sort((a, b) => rank(a) - rank(b));
    const outcome = catalogue.authorise[target]!;
    const group = groupOf(outcome);
    groups.set(group, [...(groups.get(group) ?? []), { name: name!, also, result_info: resultInfo(outcome.result) }]);
  }
  return GROUPS.filter((g) => groups.has(g)).map((group) => ({ group, choices: groups.get(group)! }));
}

/** The choices as one line of text: "paid (0000:Success; also approved), failed (D0005:Do not honor), ...". */
export const choicesText = (stage: Stage): string =>
  completionChoices(stage)
    .map(
      ({ group, choices }) => `${group}: ${choices.map((c) => `${c.name} (${c.result_info}${c.also.length ? `; also ${c.also.join(", ")}` : ""})`).join(", ")}`,
    )
    .join("; ");

/** The code that passes the 3-D Secure challenge. */
export const THREEDS_CODE = catalogue.completion.threeds_code;

const ACTION: Record<Exclude<PaymentOutcome["state"], "pending">, Action> = { approved: "pay", declined: "decline", review: "hold", cancelled: "abandon" };

/**
 * Moves a pending payment by an outcome. A pending outcome leaves it pending, except a 3-D Secure
 * challenge, after which it waits at the challenge page. A payment that is no longer pending is
 * refused (payment_not_pending), so a page used twice never charges twice.
 */
export function completePayment(tx: Transaction, outcome: PaymentOutcome, account: Account, now: Date, ids: Ids): Refusal | undefined {
  if (outcome.state === "pending") {
    const refused = step(tx, "hold", account);
    if (refused instanceof Refusal) return refused;
    if (outcome.threeds === "challenge") {
      tx.result = outcome.result;
      setThreeDs(tx, outcome);
      tx.updated_at = now.toISOString();
    }
    return undefined;
  }
  const next = step(tx, ACTION[outcome.state], account);
  if (next instanceof Refusal) return next;
  tx.result = outcome.result;
  setThreeDs(tx, outcome);
  if (outcome.risk !== tx.risk_action) {
    const risk = catalogue.risk[outcome.risk];
    tx.risk_action = outcome.risk;
    tx.risk_score = ids.intFor(`risk|${tx.transaction_id}|${outcome.risk}`, risk.score[0], risk.score[1]);
    tx.risk_reasons = risk.reasons;
  }
  if (next === "paid") tx.captured_amount = tx.amount;
  move(tx, next, now);
  return undefined;
}

function setThreeDs(tx: Transaction, outcome: PaymentOutcome): void {
  if (outcome.threeds === "none") return;
  tx.is3ds = true;
  tx.threeds_result = catalogue.threeds_results[outcome.threeds];
}

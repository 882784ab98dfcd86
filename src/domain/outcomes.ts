// The payment outcome catalogue (data/outcomes.json) the scenarios name, typed: what each outcome
// does to a payment, and to a batch order.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { dataDir } from "../base/paths.js";

export interface RiskReason {
  name: string;
  status: "ACCEPT" | "REJECT" | "REVIEW";
}

type RiskAction = "ACCEPT" | "REVIEW" | "REJECT";
type ThreeDs = "none" | "frictionless" | "challenge" | "failed" | "external" | "passed" | "abandoned";

export interface PaymentOutcome {
  state: "approved" | "declined" | "pending" | "review" | "cancelled";
  result: string;
  risk: RiskAction;
  threeds: ThreeDs;
}

/** A batch outcome: refuse the order with a codes.json result, or shape what follows (refunds). */
export interface OrderOutcome {
  refuse?: string;
  refund?: { result?: "processed" | "failed"; after_seconds?: number };
}

interface Catalogue {
  authorise: Record<string, PaymentOutcome>;
  /** payer pages: what can be done at each page, as authorise outcome names */
  completion: { threeds_code: string; "3ds": Record<string, string>; apm: Record<string, string>; checkout: Record<string, string> };
  capture: Record<string, OrderOutcome>;
  cancel: Record<string, OrderOutcome>;
  review: Record<string, OrderOutcome>;
  refund: Record<string, OrderOutcome>;
  threeds_results: Record<ThreeDs, string>;
  risk: Record<RiskAction, { score: [number, number]; reasons: RiskReason[] }>;
  antifraud_provider: string;
  /** failure_reason texts by payout failure_type */
  payout: { failure_reasons: Record<string, string> };
  /** named payout outcomes: the same shape as a rule's then.payout */
  payout_outcomes: Record<
    string,
    { status?: "PENDING" | "COMPLETED" | "FAILED"; failure_type?: string; after_seconds?: number; then?: "COMPLETED" | "FAILED" }
  >;
}

export const catalogue: Catalogue = JSON.parse(readFileSync(resolve(dataDir, "outcomes.json"), "utf8")) as Catalogue;
// payments share the catalogue's risk reasons: nobody may change them in place
for (const risk of Object.values(catalogue.risk)) {
  for (const reason of risk.reasons) Object.freeze(reason);
  Object.freeze(risk.reasons);
}

export function paymentOutcome(name: string): PaymentOutcome {
  const outcome = catalogue.authorise[name];
  if (!outcome) throw new Error(`outcomes.json has no authorise outcome "${name}"`);
  return outcome;
}

/** Which catalogue section serves an operation's outcomes. */
const SECTION: Record<string, string> = { apm: "authorise", checkout: "authorise", recurring: "authorise", payout: "payout_outcomes" };

/** Sections that describe outcomes but are not what a scenario rule names. */
const NOT_RULE_OUTCOMES = new Set(["completion", "threeds_results", "risk", "payout"]);

/** Whether `outcome` is a named outcome of `operation` (of any operation when undefined). */
export function catalogueHas(operation: string | undefined, outcome: string): boolean {
  const sections = catalogue as unknown as Record<string, unknown>;
  const names = operation === undefined ? Object.keys(sections).filter((n) => !NOT_RULE_OUTCOMES.has(n)) : [SECTION[operation] ?? operation];
  return names.some((n) => {
    const section = sections[n];
    return section !== null && typeof section === "object" && !Array.isArray(section) && outcome in section;
  });
}

export function orderOutcome(operation: "capture" | "cancel" | "review" | "refund", name: string): OrderOutcome | undefined {
  return catalogue[operation][name];
}

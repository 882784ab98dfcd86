// The code table (data/codes.json) and the one error type that carries a code from it; below, the
// outcome catalogue (data/outcomes.json) the scenarios name.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { dataDir } from "../base/paths.js";

export interface ResultEntry {
  code: string;
  text: string;
  http?: number;
}

interface CodeFile {
  order_status: Record<"success" | "failure" | "pending" | "review", string>;
  payment_status: Record<PaymentState, string>;
  refund_status: Record<"rejected" | "accepted" | "processed" | "failed", string>;
  batch_status: { failed: string; ok: string };
  return_status: { failed: string; ok: string; ok_message: string };
  query_result: { found: string; not_found: string };
  recurring_status: Record<RecurringState, string>;
  payout_status: string[];
  payout_failure_types: string[];
  results: Record<string, ResultEntry>;
}

export type PaymentState = "pending" | "authorised" | "review" | "paid" | "partially_refunded" | "refunded" | "cancelled" | "declined";

export type RecurringState = "cancelled" | "active" | "finished" | "suspended";

export const codes: CodeFile = JSON.parse(readFileSync(resolve(dataDir, "codes.json"), "utf8")) as CodeFile;

/** The result entry for a key; a missing key is a programming error, caught by the codes test. */
export function result(key: string): ResultEntry {
  const entry = codes.results[key];
  if (!entry) throw new Error(`codes.json has no result "${key}"`);
  return entry;
}

/** `<code>:<text>` per result key, made once: a 50-order batch writes the same one 100 times */
const plainInfo = new Map<string, string>();

/** `<code>:<text>`, with an optional detail after the text ("I0002:Invalid field: amount must be ..."). */
export function resultInfo(key: string, detail?: string): string {
  if (!detail) {
    let info = plainInfo.get(key);
    if (info === undefined) {
      const { code, text } = result(key);
      plainInfo.set(key, (info = `${code}:${text}`));
    }
    return info;
  }
  const { code, text } = result(key);
  return `${code}:${text}: ${detail}`;
}

export interface FieldProblem {
  field: string;
  message: string;
}

/**
 * A request the gateway refuses as a whole (bad body, signature, unknown merchant, ...).
 * Rendered in the operation's own format by http/operation.ts (runOperation). A simulated decline is not an error.
 */
export class GatewayError extends Error {
  override name = "GatewayError";
  readonly key: string;
  readonly detail: string | undefined;
  readonly problems: FieldProblem[];

  constructor(key: string, detail?: string, problems: FieldProblem[] = []) {
    super(resultInfo(key, detail));
    this.key = key;
    this.detail = detail;
    this.problems = problems;
  }

  get httpStatus(): number {
    return result(this.key).http ?? 400;
  }

  get info(): string {
    return this.message;
  }
}

// The payment outcome catalogue (data/outcomes.json), typed.
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

// The code table (data/codes.json) and the one error type that carries a code from it. The outcome
// catalogue the scenarios name: domain/outcomes.ts.
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

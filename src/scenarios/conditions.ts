// Does a rule's `when` hold for a request? Pure: fields in, boolean out.
import type { Condition, Scenario, Then, When } from "./schema.js";

/** The value at a dotted path of the request, as text ("" when absent or not a scalar). */
export function valueAt(fields: Record<string, unknown>, path: string): string {
  let node: unknown = fields;
  for (const part of path.split(".")) {
    if (node === null || typeof node !== "object") return "";
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === "string" || typeof node === "number" || typeof node === "boolean" ? String(node) : "";
}

/** "12.3" → "30", "7" → "00" */
export const centsOf = (amount: string) => amount.split(".")[1]?.padEnd(2, "0").slice(0, 2) ?? "00";

const same = (a: string, b: string | number | boolean) => a === String(b);
const asNumber = (s: string) => (s.trim() === "" ? Number.NaN : Number(s));

export function holds(condition: Condition, actual: string): boolean {
  if (typeof condition !== "object") return same(actual, condition);
  if (Array.isArray(condition)) return condition.some((c) => same(actual, c));
  const n = asNumber(actual);
  const checks: boolean[] = [];
  const c = condition;
  if (c.equals !== undefined) checks.push(same(actual, c.equals));
  if (c.in !== undefined) checks.push(c.in.some((v) => same(actual, v)));
  if (c.not !== undefined) checks.push(!(Array.isArray(c.not) ? c.not : [c.not]).some((v) => same(actual, v)));
  if (c.prefix !== undefined) checks.push(actual.startsWith(c.prefix));
  if (c.suffix !== undefined) checks.push(actual.endsWith(c.suffix));
  if (c.regex !== undefined) checks.push(new RegExp(c.regex).test(actual));
  if (c.gt !== undefined) checks.push(n > c.gt);
  if (c.gte !== undefined) checks.push(n >= c.gte);
  if (c.lt !== undefined) checks.push(n < c.lt);
  if (c.lte !== undefined) checks.push(n <= c.lte);
  if (c.cents !== undefined) checks.push((Array.isArray(c.cents) ? c.cents : [c.cents]).includes(centsOf(actual)));
  if (c.present !== undefined) checks.push((actual !== "") === c.present);
  return checks.every(Boolean);
}

export interface MatchInput {
  operation: string;
  fields: Record<string, unknown>;
  /** 1 for the first call of this operation for this order_no, 2 for the second, ... */
  nth: number;
}

export function whenHolds(when: When, input: MatchInput): boolean {
  return Object.entries(when).every(([key, condition]) => {
    if (key === "operation") return holds(condition, input.operation);
    if (key === "nth") return holds(condition, String(input.nth));
    if (key.endsWith("_cents")) return holds(condition, centsOf(valueAt(input.fields, key.slice(0, -"_cents".length))));
    return holds(condition, valueAt(input.fields, key));
  });
}

/**
 * Walks the rules in order: the first match wins, except that a rule with `continue: true` adds its
 * effects and lets the next match decide. Returns the merged effects and the rules that matched.
 */
export function evaluate(rules: Scenario["rules"], input: MatchInput): { then: Then; matched: string[] } {
  let then: Then = {};
  const matched: string[] = [];
  for (const rule of rules) {
    if (!whenHolds(rule.when, input)) continue;
    then = { ...then, ...rule.then };
    matched.push(`${rule.from}/${rule.id}`);
    if (!rule.then.continue) break;
  }
  const { continue: _continue, ...effects } = then;
  return { then: effects, matched };
}

// Which outcome a request gets: the first rule of the active scenario whose `when` matches.
// A first version: `when` compares request fields by equality (a list means one-of) plus
// `amount_cents`; the full engine (schema, YAML, extends, precedence, reload) is issue 5.
import { readFileSync, existsSync } from "node:fs";
import { resolve } from "node:path";

export interface Then {
  outcome?: string;
  /** refunds: when an accepted refund settles, and how */
  refund?: { after_seconds?: number; result?: "processed" | "failed" };
}

/** A condition on one field: equals (a string), one-of (a list), or a prefix/suffix test. */
export type Condition = string | string[] | { prefix?: string; suffix?: string };

export interface Rule {
  id: string;
  /** field path (dots for nesting, e.g. beneficiary.bank_details.account_number) → condition */
  when: Record<string, Condition>;
  then: Then;
}

export interface Scenario {
  name: string;
  description: string;
  rules: Rule[];
}

export interface Decision {
  outcome: string;
  then: Then;
  /** "<scenario>/<rule id>", sent as X-Sandbox-Rule and logged */
  rule: string;
}

export class ScenarioError extends Error {
  override name = "ScenarioError";
}

export function loadScenario(dir: string, name: string): Scenario {
  const file = resolve(dir, `${name}.json`);
  if (!existsSync(file)) throw new ScenarioError(`${file}: scenario "${name}" not found`);
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Scenario;
  } catch (err) {
    throw new ScenarioError(`${file}: not valid JSON (${(err as Error).message})`);
  }
}

/** The value at a dotted path of the request, as text ("" when absent or not a value). */
function valueAt(fields: Record<string, unknown>, path: string): string {
  let node: unknown = fields;
  for (const part of path.split(".")) {
    if (node === null || typeof node !== "object") return "";
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === "string" || typeof node === "number" ? String(node) : "";
}

function test(condition: Condition, actual: string): boolean {
  if (typeof condition === "string") return actual === condition;
  if (Array.isArray(condition)) return condition.includes(actual);
  return (condition.prefix === undefined || actual.startsWith(condition.prefix)) && (condition.suffix === undefined || actual.endsWith(condition.suffix));
}

function matches(when: Rule["when"], operation: string, fields: Record<string, unknown>): boolean {
  return Object.entries(when).every(([key, condition]) => {
    const actual = key === "operation" ? operation : key.endsWith("_cents") ? cents(valueAt(fields, key.slice(0, -"_cents".length))) : valueAt(fields, key);
    return test(condition, actual);
  });
}

/** "12.3" → "30", "7" → "00": the cents of an amount field (amount_cents, refund_amount_cents, ...) */
const cents = (amount: string) => amount.split(".")[1]?.padEnd(2, "0").slice(0, 2) ?? "00";

export function selectOutcome(scenario: Scenario, operation: string, fields: Record<string, unknown>, fallback: string): Decision {
  const rule = scenario.rules.find((r) => matches(r.when, operation, fields));
  return rule
    ? { outcome: rule.then.outcome ?? fallback, then: rule.then, rule: `${scenario.name}/${rule.id}` }
    : { outcome: fallback, then: {}, rule: `${scenario.name}/(no rule)` };
}

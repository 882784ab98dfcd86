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

export interface Rule {
  id: string;
  when: Record<string, string | string[]>;
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

function matches(when: Rule["when"], operation: string, fields: Record<string, string>): boolean {
  return Object.entries(when).every(([key, expected]) => {
    const actual = key === "operation" ? operation : key.endsWith("_cents") ? cents(fields[key.slice(0, -"_cents".length)]) : fields[key];
    return Array.isArray(expected) ? expected.includes(actual ?? "") : actual === expected;
  });
}

/** "12.3" → "30", "7" → "00": the cents of an amount field (amount_cents, refund_amount_cents, ...) */
const cents = (amount: string | undefined) => (amount ?? "").split(".")[1]?.padEnd(2, "0").slice(0, 2) ?? "00";

export function selectOutcome(scenario: Scenario, operation: string, fields: Record<string, string>, fallback: string): Decision {
  const rule = scenario.rules.find((r) => matches(r.when, operation, fields));
  return rule
    ? { outcome: rule.then.outcome ?? fallback, then: rule.then, rule: `${scenario.name}/${rule.id}` }
    : { outcome: fallback, then: {}, rule: `${scenario.name}/(no rule)` };
}

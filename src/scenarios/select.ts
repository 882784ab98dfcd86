// Which outcome a request gets: the first rule of the active scenario whose `when` matches.
// A first version: `when` compares request fields by equality (a list means one-of) plus
// `amount_cents`; the full engine (schema, YAML, extends, precedence, reload) is issue 5.
import { readFileSync, existsSync } from "node:fs";
import { resolve } from "node:path";

export interface Rule {
  id: string;
  when: Record<string, string | string[]>;
  then: { outcome: string };
}

export interface Scenario {
  name: string;
  description: string;
  rules: Rule[];
}

export interface Decision {
  outcome: string;
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
    const actual = key === "operation" ? operation : key === "amount_cents" ? (fields.amount ?? "").split(".")[1]?.padEnd(2, "0") ?? "00" : fields[key];
    return Array.isArray(expected) ? expected.includes(actual ?? "") : actual === expected;
  });
}

export function selectOutcome(scenario: Scenario, operation: string, fields: Record<string, string>, fallback: string): Decision {
  const rule = scenario.rules.find((r) => matches(r.when, operation, fields));
  return rule ? { outcome: rule.then.outcome, rule: `${scenario.name}/${rule.id}` } : { outcome: fallback, rule: `${scenario.name}/(no rule)` };
}

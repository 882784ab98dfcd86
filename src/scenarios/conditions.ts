// Does a rule's `when` hold for a request? Pure: fields in, boolean out.
import { CardOnFile } from "../domain/card-on-file.js";
import type { Condition, Scenario, Then, When } from "./schema.js";

/** Rules' dotted paths, split once (the paths come from scenario files: a bounded set). */
const pathParts = new Map<string, string[]>();

/** What is at a dotted path of the request (undefined when absent). */
function nodeAt(fields: Record<string, unknown>, path: string): unknown {
  let parts = pathParts.get(path);
  if (!parts) pathParts.set(path, (parts = path.split(".")));
  let node: unknown = fields;
  for (const part of parts) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/** A node as text ("" when absent or not a scalar; a card on file as its masked number). */
const asText = (node: unknown): string =>
  typeof node === "string" || typeof node === "number" || typeof node === "boolean" ? String(node) : node instanceof CardOnFile ? node.masked : "";

/** The value at a dotted path of the request, as text ("" when absent or not a scalar). */
const valueAt = (fields: Record<string, unknown>, path: string): string => asText(nodeAt(fields, path));

/** "12.3" → "30", "7" → "00" */
const centsOf = (amount: string) => amount.split(".")[1]?.padEnd(2, "0").slice(0, 2) ?? "00";

/** Is the value `v`? A card on file knows through its fingerprint (its text is masked). */
const is = (actual: string, card: CardOnFile | undefined, v: string | number | boolean) => (card === undefined ? actual === String(v) : card.is(v));
const asNumber = (s: string) => (s.trim() === "" ? Number.NaN : Number(s));

/** A rule's regular expressions, compiled once (the schema checked them when the scenario loaded). */
const regexes = new Map<string, RegExp>();
const regexOf = (source: string) => {
  let re = regexes.get(source);
  if (!re) regexes.set(source, (re = new RegExp(source)));
  return re;
};

/**
 * Does `condition` hold for the value `actual`? For a card on file (`card`), `actual` is its masked
 * number ("424242******4242"): a value, a list, equals, in and not compare the rule's numbers with
 * its fingerprint; a prefix sees at most the six digits shown and a suffix the last four (a longer
 * one never matches); a regular expression sees the masked number; number comparisons never match.
 */
function holds(condition: Condition, actual: string, card?: CardOnFile): boolean {
  if (typeof condition !== "object") return is(actual, card, condition);
  if (Array.isArray(condition)) return condition.some((c) => is(actual, card, c));
  const c = condition;
  const n = c.gt !== undefined || c.gte !== undefined || c.lt !== undefined || c.lte !== undefined ? asNumber(actual) : Number.NaN;
  // every test named must pass: the first that fails decides
  if (c.equals !== undefined && !is(actual, card, c.equals)) return false;
  if (c.in !== undefined && !c.in.some((v) => is(actual, card, v))) return false;
  if (c.not !== undefined && (Array.isArray(c.not) ? c.not : [c.not]).some((v) => is(actual, card, v))) return false;
  if (c.prefix !== undefined && !(actual.startsWith(c.prefix) && (!card || c.prefix.length <= 6))) return false;
  if (c.suffix !== undefined && !(actual.endsWith(c.suffix) && (!card || c.suffix.length <= 4))) return false;
  if (c.regex !== undefined && !regexOf(c.regex).test(actual)) return false;
  if (c.gt !== undefined && !(n > c.gt)) return false;
  if (c.gte !== undefined && !(n >= c.gte)) return false;
  if (c.lt !== undefined && !(n < c.lt)) return false;
  if (c.lte !== undefined && !(n <= c.lte)) return false;
  if (c.cents !== undefined && !(Array.isArray(c.cents) ? c.cents : [c.cents]).includes(centsOf(actual))) return false;
  if (c.present !== undefined && (actual !== "") !== c.present) return false;
  return true;
}

export interface MatchInput {
  operation: string;
  fields: Record<string, unknown>;
  /** 1 for the first call of this operation for this order_no, 2 for the second, ... */
  nth: number;
}

/** A `when` as its list of tests, worked out once per rule. */
const testsOf = new WeakMap<When, [string, Condition][]>();

function whenHolds(when: When, input: MatchInput): boolean {
  let tests = testsOf.get(when);
  if (!tests) testsOf.set(when, (tests = Object.entries(when)));
  for (const [key, condition] of tests) {
    if (key === "operation" || key === "nth") {
      if (!holds(condition, key === "nth" ? String(input.nth) : input.operation)) return false;
      continue;
    }
    if (key.endsWith("_cents")) {
      if (!holds(condition, centsOf(valueAt(input.fields, key.slice(0, -"_cents".length))))) return false;
      continue;
    }
    const node = nodeAt(input.fields, key);
    if (!holds(condition, asText(node), node instanceof CardOnFile ? node : undefined)) return false;
  }
  return true;
}

type Rule = Scenario["rules"][number];
/** Per scenario's rule list and operation: the rules that can match it, in order. */
const rulesByOperation = new WeakMap<Scenario["rules"], Map<string, Rule[]>>();

/** The rules that may match `operation`: a rule naming other operations is left out, once per scenario. */
function rulesFor(rules: Scenario["rules"], operation: string): Rule[] {
  let byOperation = rulesByOperation.get(rules);
  if (!byOperation) rulesByOperation.set(rules, (byOperation = new Map()));
  let list = byOperation.get(operation);
  if (!list) byOperation.set(operation, (list = rules.filter((r) => r.when.operation === undefined || holds(r.when.operation, operation))));
  return list;
}

/** "<scenario file>/<rule id>": how X-Sandbox-Rule, histories and coverage name a rule; made once per rule */
const ruleNames = new WeakMap<Rule, string>();
export function ruleName(rule: Rule): string {
  let name = ruleNames.get(rule);
  if (name === undefined) ruleNames.set(rule, (name = `${rule.from}/${rule.id}`));
  return name;
}

/**
 * Walks the rules in order: the first match wins, except that a rule with `continue: true` adds its
 * effects and lets the next match decide. Returns the merged effects and the rules that matched.
 */
export function evaluate(rules: Scenario["rules"], input: MatchInput): { then: Then; matched: string[] } {
  let then: Then = {};
  const matched: string[] = [];
  for (const rule of rulesFor(rules, input.operation)) {
    if (!whenHolds(rule.when, input)) continue;
    then = { ...then, ...rule.then };
    matched.push(ruleName(rule));
    if (!rule.then.continue) break;
  }
  const { continue: _continue, ...effects } = then;
  return { then: effects, matched };
}

/** Every card number the scenarios' rules name on `card` (as a value, in a list, or by equals, in or not). */
export function cardNumbersNamed(scenarios: Scenario[]): Set<string> {
  const named = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v === "string" || typeof v === "number") named.add(String(v).replace(/[\s-]/g, ""));
  };
  for (const scenario of scenarios) {
    for (const rule of scenario.rules) {
      const c = rule.when.card;
      if (c === undefined) continue;
      if (typeof c !== "object") add(c);
      else if (Array.isArray(c)) c.forEach(add);
      else {
        add(c.equals);
        c.in?.forEach(add);
        (Array.isArray(c.not) ? c.not : [c.not]).forEach(add);
      }
    }
  }
  return named;
}

// What a merchant's tests exercised: which rules of the scenarios in force decided at least one
// answer (and how often), and which outcomes of the catalogue each operation produced or never
// produced. Fed by every scenario decision and by payer-page completions; kept per merchant
// (CI jobs isolate themselves by merchant_id), for at most COVERAGE_MERCHANT_LIMIT merchants.
import { catalogue } from "../domain/outcomes.js";
import { ruleName } from "./conditions.js";
import { RULE_OPERATIONS, type Rule, type Scenario, type Then } from "./schema.js";

const COVERAGE_MERCHANT_LIMIT = 1000;

/** The catalogue sections a report lists, by the operation name it shows. */
const SECTIONS = { authorise: "authorise", capture: "capture", cancel: "cancel", review: "review", refund: "refund", payout: "payout_outcomes" } as const;
type Shown = keyof typeof SECTIONS;
/** Operations that decide from another one's outcomes (a redirect or APM payment is a payment). */
const SHOWN_AS: Record<string, Shown> = { apm: "authorise", checkout: "authorise", recurring: "authorise" };
const shownOf = (operation: string): Shown | undefined => SHOWN_AS[operation] ?? (operation in SECTIONS ? (operation as Shown) : undefined);

/** the catalogue's outcome names per operation, listed once (every decision looks its outcome up) */
const namesOf = new Map<Shown, readonly string[]>();
function outcomeNames(shown: Shown): readonly string[] {
  let names = namesOf.get(shown);
  if (!names) namesOf.set(shown, (names = Object.keys(catalogue[SECTIONS[shown]] as Record<string, unknown>).filter((n) => !n.startsWith("$"))));
  return names;
}

interface Tally {
  /** by the scenario that answered: its rules' answers (an inherited rule counts where it answered) */
  rules: Map<string, Map<string, number>>;
  outcomes: Map<Shown, Map<string, number>>;
  /** the operations the merchant's requests were decided for */
  operations: Set<string>;
}

/** What a report counts: the rules of some operations only (a card-only shop's), of one scenario only. */
export interface CoverageScope {
  /** rule operations (authorise, capture, refund, ...): a rule for none of them is left out; a rule for any operation stays */
  operations?: readonly string[];
  /** that scenario's rules only, answered or not (default: the scenarios that answered) */
  scenario?: string;
}

export interface CoverageReport {
  merchant_id: string | null;
  /** what was counted: every operation and scenario in use when null */
  scope: { operations: string[] | null; scenario: string | null };
  scenarios: { name: string; rules: { rule: string; answers: number }[] }[];
  operations: { operation: Shown; produced: Record<string, number>; never: string[] }[];
}

/**
 * A scope as a caller writes it: `operations` a comma list of rule operations, or "used" (those the
 * merchant's requests were decided for); `scenario` a scenario's name. An unknown one is refused
 * with what is known.
 */
export function readScope(
  given: { operations?: string; scenario?: string },
  known: { scenario(name: string): boolean; used(): string[] },
): CoverageScope | { refused: string } {
  const scope: CoverageScope = {};
  if (given.operations !== undefined) {
    const named =
      given.operations.trim() === "used"
        ? known.used()
        : given.operations
            .split(",")
            .map((o) => o.trim())
            .filter(Boolean);
    const unknown = named.filter((o) => !RULE_OPERATIONS.includes(o));
    if (given.operations.trim() !== "used" && (unknown.length || named.length === 0))
      return {
        refused: `operations must be "used" or a comma list of ${RULE_OPERATIONS.join(", ")}${unknown.length ? `; unknown: ${unknown.join(", ")}` : ""}`,
      };
    scope.operations = named;
  }
  if (given.scenario !== undefined) {
    if (!known.scenario(given.scenario)) return { refused: `no scenario ${JSON.stringify(given.scenario)} (GET /__sandbox/scenarios lists them)` };
    scope.scenario = given.scenario;
  }
  return scope;
}

/** the operations a rule can answer (its `when.operation`), or undefined: any */
function ruleOperations(rule: Pick<Rule, "when">): readonly string[] | undefined {
  const named = rule.when?.operation;
  if (typeof named === "string") return [named];
  if (Array.isArray(named)) return named.map(String);
  if (named && typeof named === "object") {
    const test = named as { equals?: unknown; in?: unknown[] };
    if (typeof test.equals === "string") return [test.equals];
    if (Array.isArray(test.in)) return test.in.map(String);
  }
  return undefined;
}

/** The share of the rules of the scenarios in use that decided at least one answer (a rule two scenarios share counts once). */
export function ruleCoverage(report: CoverageReport): { answered: number; total: number; percent: number } {
  const rules = new Map<string, number>();
  for (const s of report.scenarios) for (const r of s.rules) rules.set(r.rule, Math.max(rules.get(r.rule) ?? 0, r.answers));
  const answered = [...rules.values()].filter((n) => n > 0).length;
  return { answered, total: rules.size, percent: share(answered, rules.size) };
}

/** The outcomes the operations produced, of all the catalogue's for them. */
export function outcomeCoverage(report: CoverageReport): { produced: number; total: number; percent: number } {
  const produced = report.operations.reduce((n, o) => n + Object.keys(o.produced).length, 0);
  const total = produced + report.operations.reduce((n, o) => n + o.never.length, 0);
  return { produced, total, percent: share(produced, total) };
}

/** a per cent with one decimal, rounded down: 99.97% never reads as 100% */
const share = (part: number, whole: number) => (whole ? Math.floor((part / whole) * 1000) / 10 : 0);

/** The named outcome a decision gave, including what a rule says with `refund` or `payout` instead of a name. */
function outcomeOf(shown: Shown, outcome: string, then: Then): string {
  if (shown === "refund" && outcome === "accepted" && then.refund) {
    if (then.refund.result === "failed") return "refund_fails_later";
    if (then.refund.after_seconds !== undefined) return "refund_processed_later";
  }
  if (shown === "payout" && !(outcome in catalogue.payout_outcomes) && then.payout) {
    const p = then.payout;
    if (p.status === "PENDING") return p.then === "FAILED" ? "pending_then_failed" : "pending_then_completed";
    if (p.status === "FAILED") {
      const named = (p.failure_type ?? "").toLowerCase();
      return named in catalogue.payout_outcomes ? named : "failed";
    }
    return "completed";
  }
  if (shown === "payout" && outcome === "") return "completed";
  return outcome;
}

export class Coverage {
  private readonly tallies = new Map<string, Tally>();
  /** `scenarioOf` gives a scenario's rules (the registry's scenarios as they are now) */
  constructor(private readonly scenarioOf: (name: string) => Scenario | undefined) {}

  private tally(merchantId: string): Tally {
    let t = this.tallies.get(merchantId);
    if (!t) {
      if (this.tallies.size >= COVERAGE_MERCHANT_LIMIT) this.tallies.delete(this.tallies.keys().next().value!);
      this.tallies.set(merchantId, (t = { rules: new Map(), outcomes: new Map(), operations: new Set() }));
    }
    return t;
  }

  /** A scenario decision: its scenario, the rules that matched ("scenario/id"), and what it decided. */
  decided(merchantId: string, scenario: string, matched: readonly string[], operation: string, outcome: string, then: Then): void {
    const t = this.tally(merchantId);
    t.operations.add(operation);
    let answered = t.rules.get(scenario);
    if (!answered) t.rules.set(scenario, (answered = new Map()));
    for (const rule of matched) answered.set(rule, (answered.get(rule) ?? 0) + 1);
    const shown = shownOf(operation);
    if (shown) this.produced(merchantId, shown, outcomeOf(shown, outcome, then));
  }

  /** An outcome a request named itself (X-Sandbox-Outcome): produced, with no scenario rule answering. */
  chosen(merchantId: string, operation: string, outcome: string): void {
    const shown = shownOf(operation);
    if (shown) this.produced(merchantId, shown, outcome);
  }

  /** An outcome reached another way (a payer's choice on a payer page, an operator's completion). */
  produced(merchantId: string, operation: Shown, outcome: string): void {
    if (!outcomeNames(operation).includes(outcome)) return;
    const byOutcome = this.tally(merchantId).outcomes;
    let counts = byOutcome.get(operation);
    if (!counts) byOutcome.set(operation, (counts = new Map()));
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  }

  clear(merchantId?: string): void {
    if (merchantId === undefined) this.tallies.clear();
    else this.tallies.delete(merchantId);
  }

  /** the operations a merchant's requests (or every merchant's) were decided for, sorted */
  operationsUsed(merchantId?: string): string[] {
    const tallies = this.talliesOf(merchantId);
    return [...new Set(tallies.flatMap((t) => [...t.operations]))].sort();
  }

  private talliesOf(merchantId: string | undefined): Tally[] {
    return merchantId === undefined ? [...this.tallies.values()] : [this.tallies.get(merchantId)].filter((t): t is Tally => t !== undefined);
  }

  /** One merchant's coverage, or every merchant's added up; `scope` narrows what is counted. */
  report(merchantId?: string, scope: CoverageScope = {}): CoverageReport {
    const tallies = this.talliesOf(merchantId);
    const used = scope.scenario !== undefined ? [scope.scenario] : [...new Set(tallies.flatMap((t) => [...t.rules.keys()]))].sort();
    const answers = (scenario: string, rule: string) => tallies.reduce((n, t) => n + (t.rules.get(scenario)?.get(rule) ?? 0), 0);
    const inScope = (rule: Rule) => {
      const named = ruleOperations(rule);
      return !scope.operations || !named || named.some((o) => scope.operations!.includes(o));
    };
    const scenarios = used.flatMap((name) => {
      const s = this.scenarioOf(name);
      return s ? [{ name, rules: s.rules.filter(inScope).map((rule) => ({ rule: ruleName(rule), answers: answers(name, ruleName(rule)) })) }] : [];
    });
    const shownInScope = scope.operations && new Set(scope.operations.map(shownOf));
    const operations = (Object.keys(SECTIONS) as Shown[])
      .filter((operation) => !shownInScope || shownInScope.has(operation))
      .map((operation) => {
        const produced: Record<string, number> = {};
        for (const t of tallies) for (const [name, n] of t.outcomes.get(operation) ?? []) produced[name] = (produced[name] ?? 0) + n;
        return { operation, produced, never: outcomeNames(operation).filter((n) => !(n in produced)) };
      });
    return {
      merchant_id: merchantId ?? null,
      scope: { operations: scope.operations ? [...scope.operations] : null, scenario: scope.scenario ?? null },
      scenarios,
      operations,
    };
  }
}

/** The report as Markdown, for a CI job to publish (e.g. as a job summary). */
export function coverageMarkdown(r: CoverageReport): string {
  const lines = [`# Sandgate coverage${r.merchant_id ? ` of merchant ${r.merchant_id}` : " (all merchants)"}`, ""];
  if (r.scope.operations || r.scope.scenario) lines.push(`Counted: ${scopeText(r.scope)}.`, "");
  if (r.scenarios.length === 0) lines.push("No request was decided by a scenario.", "");
  for (const s of r.scenarios) {
    lines.push(`## Scenario \`${s.name}\``, "", "| rule | answers |", "| --- | ---: |");
    for (const rule of s.rules) lines.push(`| \`${rule.rule}\` | ${rule.answers || "never"} |`);
    lines.push("");
  }
  lines.push("## Outcomes", "", "| operation | produced | never produced |", "| --- | --- | --- |");
  for (const o of r.operations) {
    const produced =
      Object.entries(o.produced)
        .map(([name, n]) => `${name} ×${n}`)
        .join(", ") || "—";
    lines.push(`| ${o.operation} | ${produced} | ${o.never.join(", ") || "—"} |`);
  }
  return `${lines.join("\n")}\n`;
}

/** what a report counted, in words: "the rules of authorise, capture, refund in scenario default" */
export function scopeText(scope: CoverageReport["scope"]): string {
  const ops = scope.operations ? `the rules of ${scope.operations.join(", ")}` : "every rule";
  return `${ops}${scope.scenario ? ` in scenario ${scope.scenario}` : " of the scenarios that answered"}`;
}

// What a merchant's tests exercised: which rules of the scenarios in force decided at least one
// answer (and how often), and which outcomes of the catalogue each operation produced or never
// produced. Fed by every scenario decision and by payer-page completions; kept per merchant
// (CI jobs isolate themselves by merchant_id), for at most COVERAGE_MERCHANT_LIMIT merchants.
import { catalogue } from "../domain/outcomes.js";
import { ruleName } from "./conditions.js";
import type { Scenario, Then } from "./schema.js";

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
  scenarios: Set<string>;
  rules: Map<string, number>;
  outcomes: Map<Shown, Map<string, number>>;
}

export interface CoverageReport {
  merchant_id: string | null;
  scenarios: { name: string; rules: { rule: string; answers: number }[] }[];
  operations: { operation: Shown; produced: Record<string, number>; never: string[] }[];
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
      this.tallies.set(merchantId, (t = { scenarios: new Set(), rules: new Map(), outcomes: new Map() }));
    }
    return t;
  }

  /** A scenario decision: its scenario, the rules that matched ("scenario/id"), and what it decided. */
  decided(merchantId: string, scenario: string, matched: readonly string[], operation: string, outcome: string, then: Then): void {
    const t = this.tally(merchantId);
    t.scenarios.add(scenario);
    for (const rule of matched) t.rules.set(rule, (t.rules.get(rule) ?? 0) + 1);
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

  /** One merchant's coverage, or every merchant's added up. */
  report(merchantId?: string): CoverageReport {
    const tallies = merchantId === undefined ? [...this.tallies.values()] : [this.tallies.get(merchantId)].filter((t): t is Tally => t !== undefined);
    const used = [...new Set(tallies.flatMap((t) => [...t.scenarios]))].sort();
    const answers = (rule: string) => tallies.reduce((n, t) => n + (t.rules.get(rule) ?? 0), 0);
    const scenarios = used.flatMap((name) => {
      const s = this.scenarioOf(name);
      return s ? [{ name, rules: s.rules.map(ruleName).map((rule) => ({ rule, answers: answers(rule) })) }] : [];
    });
    const operations = (Object.keys(SECTIONS) as Shown[]).map((operation) => {
      const produced: Record<string, number> = {};
      for (const t of tallies) for (const [name, n] of t.outcomes.get(operation) ?? []) produced[name] = (produced[name] ?? 0) + n;
      return { operation, produced, never: outcomeNames(operation).filter((n) => !(n in produced)) };
    });
    return { merchant_id: merchantId ?? null, scenarios, operations };
  }
}

/** The report as Markdown, for a CI job to publish (e.g. as a job summary). */
export function coverageMarkdown(r: CoverageReport): string {
  const lines = [`# Sandgate coverage${r.merchant_id ? ` of merchant ${r.merchant_id}` : " (all merchants)"}`, ""];
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

// The dashboard's coverage view: per scenario in use, how many answers each rule decided (never
// in red), and per operation which outcomes of the catalogue were produced and which never were.
import { counted } from "../base/words.js";
import { outcomeCoverage, ruleCoverage, scopeText, type CoverageReport } from "../scenarios/coverage.js";
import { BASE, e, frame, options, table } from "./frame.js";
import { callPath } from "../api/operator-calls.js";

/** A line of the summary: rules answered and outcomes produced, each of its total, as a per cent. */
function summaryRow(label: string, r: CoverageReport): string[] {
  const rules = ruleCoverage(r);
  const outcomes = outcomeCoverage(r);
  return [
    label,
    `<strong>${e(rules.percent)}%</strong> <span class="hint">(${e(rules.answered)} of ${e(rules.total)})</span>`,
    `<strong>${e(outcomes.percent)}%</strong> <span class="hint">(${e(outcomes.produced)} of ${e(outcomes.total)})</span>`,
  ];
}

/** What the tab was asked to show: whose, and what to count (the form's fields as sent). */
export interface CoverageFilter {
  merchant: string;
  operations: string;
  scenario: string;
  /** every scenario's name, for the drop-down */
  scenarios: string[];
}

/** `byMerchant`: each merchant's own report, for the summary (when no one merchant is shown); `refused`: why the scope was not applied. */
export function coveragePage(r: CoverageReport, f: CoverageFilter, byMerchant: CoverageReport[] = [], refused?: string): string {
  const { merchant } = f;
  const scenarios = r.scenarios
    .map((s) => {
      // the rules that answered first; those that never did folded below them
      const answered = s.rules.filter((rule) => rule.answers).map((rule) => [`<code>${e(rule.rule)}</code>`, e(rule.answers)]);
      const never = s.rules.filter((rule) => !rule.answers);
      const folded = never.length
        ? `<details class="never"><summary>${e(counted(never.length, "rule"))} never answered</summary><p>${never.map((rule) => `<code>${e(rule.rule)}</code>`).join(" ")}</p></details>`
        : "";
      return `<section class="card"><h2>Scenario <code>${e(s.name)}</code></h2>${answered.length ? table(["Rule", "Answers"], answered, `coverage-${s.name}`) : `<p class="hint">No rule of it answered yet.</p>`}${folded}</section>`;
    })
    .join("\n");
  const summary = [
    summaryRow(merchant ? `merchant <code>${e(merchant)}</code>` : "all merchants", r),
    ...byMerchant.map((m) =>
      summaryRow(
        `<a href="${BASE}/ui/coverage?${e(new URLSearchParams({ merchant_id: m.merchant_id ?? "", ...(f.operations ? { operations: f.operations } : {}), ...(f.scenario ? { scenario: f.scenario } : {}) }).toString())}"><code>${e(m.merchant_id)}</code></a>`,
        m,
      ),
    ),
  ];
  const outcomes = r.operations.map((o) => [
    e(o.operation),
    Object.entries(o.produced)
      .map(([name, n]) => `${e(name)} ×${e(n)}`)
      .join(", ") || `<span class="hint">—</span>`,
    o.never.length ? `<span class="sig-bad">${e(o.never.join(", "))}</span>` : `<span class="hint">—</span>`,
  ]);
  const asked = new URLSearchParams({
    ...(merchant ? { merchant_id: merchant } : {}),
    ...(f.operations ? { operations: f.operations } : {}),
    ...(f.scenario ? { scenario: f.scenario } : {}),
  }).toString();
  const query = asked ? `?${asked}` : "";
  const counting = r.scope.operations || r.scope.scenario ? ` Counted: <strong id="coverage-scope">${e(scopeText(r.scope))}</strong>.` : "";
  const problem = refused ? `<div class="flash bad" id="coverage-refused">${e(refused)}; every rule is counted.</div>` : "";
  return frame(
    "Coverage",
    "coverage",
    `<h1>Coverage</h1>
<form method="get" action="${BASE}/ui/coverage" class="card row">
<div><label for="c-merchant">Merchant</label><input id="c-merchant" name="merchant_id" value="${e(merchant)}" placeholder="all merchants"></div>
<div><label for="c-operations">Operations</label><input id="c-operations" name="operations" value="${e(f.operations)}" placeholder="every one; or authorise,capture,refund; or used"></div>
<div><label for="c-scenario">Scenario</label><select id="c-scenario" name="scenario"><option value="">those that answered</option>${options(f.scenarios, f.scenario)}</select></div>
<div class="shrink"><button type="submit" id="c-show">Show</button></div>
</form>
${problem}
<p class="hint">What the tests exercised${merchant ? ` as merchant <code>${e(merchant)}</code>` : " (all merchants)"}: the rules of the scenarios in use that decided at least one answer (each under the scenario that answered), and the outcomes each operation never produced.${counting} As JSON: <a href="${callPath("getCoverage")}${e(query)}">/__sandbox/coverage</a>; as Markdown for a CI summary: <code>?format=markdown</code> or <code>--coverage-report</code>.</p>
<section class="card" id="coverage-summary"><h2>Summary</h2>${table(["Whose", "Rules answered", "Outcomes produced"], summary, "coverage-summary-table")}</section>
${scenarios || `<section class="card"><p class="hint">No request was decided by a scenario yet.</p></section>`}
<section class="card"><h2>Outcomes</h2>${table(["Operation", "Produced", "Never produced"], outcomes, "coverage-outcomes")}</section>`,
  );
}

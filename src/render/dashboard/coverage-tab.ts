// The dashboard's coverage view: per scenario in use, how many answers each rule decided (never
// in red), and per operation which outcomes of the catalogue were produced and which never were.
import type { CoverageReport } from "../../scenarios/coverage.js";
import { BASE, e, frame, table } from "./frame.js";

export function coveragePage(r: CoverageReport, merchant: string): string {
  const scenarios = r.scenarios
    .map((s) => {
      const rows = s.rules.map((rule) => [`<code>${e(rule.rule)}</code>`, rule.answers ? e(rule.answers) : `<span class="sig-bad">never</span>`]);
      return `<section class="card"><h2>Scenario <code>${e(s.name)}</code></h2>${table(["Rule", "Answers"], rows, `coverage-${s.name}`)}</section>`;
    })
    .join("\n");
  const outcomes = r.operations.map((o) => [
    e(o.operation),
    Object.entries(o.produced)
      .map(([name, n]) => `${e(name)} ×${e(n)}`)
      .join(", ") || `<span class="hint">—</span>`,
    o.never.length ? `<span class="sig-bad">${e(o.never.join(", "))}</span>` : `<span class="hint">—</span>`,
  ]);
  const query = merchant ? `?merchant_id=${encodeURIComponent(merchant)}` : "";
  return frame(
    "Coverage",
    "coverage",
    `<h1>Coverage</h1>
<form method="get" action="${BASE}/ui/coverage" class="card row">
<div><label for="c-merchant">Merchant</label><input id="c-merchant" name="merchant_id" value="${e(merchant)}" placeholder="all merchants"></div>
<div class="shrink"><button type="submit">Show</button></div>
</form>
<p class="hint">What the tests exercised${merchant ? ` as merchant <code>${e(merchant)}</code>` : " (all merchants)"}: the rules of the scenarios in use that decided at least one answer, and the outcomes each operation never produced. As JSON: <a href="${BASE}/coverage${e(query)}">/__sandbox/coverage</a>; as Markdown for a CI summary: <code>?format=markdown</code> or <code>--coverage-report</code>.</p>
${scenarios || `<section class="card"><p class="hint">No request was decided by a scenario yet.</p></section>`}
<section class="card"><h2>Outcomes</h2>${table(["Operation", "Produced", "Never produced"], outcomes, "coverage-outcomes")}</section>`,
  );
}

// A verify report three ways: a table for people on the terminal, JSON for scripts (--report), and
// JUnit XML for CI (--junit, one test case per exchange, its differences in <failure>).
import { attr, cut, textTable, xmlSafe } from "../render/report-text.js";
import { escapeText } from "../base/markup.js";
import { KIND_MEANINGS, type Difference } from "../verify-report/verify-report.js";
import type { Suggestions } from "../verify-report/verify-report.js";
import type { VerifyReport } from "../verify-report/verify-report.js";

export function terminalReport(report: VerifyReport): string {
  const lines: string[] = [];
  const replayed = report.exchanges.filter((x) => x.kind !== "notification").length;
  const n = report.notifications;
  lines.push(
    `verified ${replayed} exchange${replayed === 1 ? "" : "s"} against ${report.target}; notifications: ${n.compared ? `${n.recorded} recorded, ${n.sent} sent by Sandgate` : "none recorded (record with --notify-to to compare them)"}`,
  );
  if (!report.differences.length) {
    lines.push("no differences");
    return `${lines.join("\n")}\n`;
  }
  const rows = report.differences.map((d) => [`#${d.exchange}`, d.operation, d.kind, d.path, cut(d.expected, 40), cut(d.actual, 40)]);
  lines.push(...textTable(["exch", "operation", "kind", "path", "gateway (recorded)", "sandgate"], rows));
  const kinds = [...new Set(report.differences.map((d) => d.kind))];
  lines.push("", `${report.differences.length} difference${report.differences.length === 1 ? "" : "s"}:`);
  for (const k of kinds) lines.push(`  ${k}: ${KIND_MEANINGS[k].means}; ${KIND_MEANINGS[k].todo}`);
  return `${lines.join("\n")}\n`;
}

function differenceLine(d: Difference): string {
  return `${d.kind} at ${d.path}: gateway ${d.expected}, Sandgate ${d.actual}${d.note ? ` (${d.note})` : ""}`;
}

export function junitReport(report: VerifyReport): string {
  const byExchange = new Map<number, Difference[]>();
  for (const d of report.differences) byExchange.set(d.exchange, [...(byExchange.get(d.exchange) ?? []), d]);
  const failures = report.exchanges.filter((x) => byExchange.has(x.exchange)).length;
  const cases = report.exchanges.map((x) => {
    const name = `#${x.exchange} ${x.operation} ${x.method} ${x.path}`;
    const found = byExchange.get(x.exchange);
    const open = `  <testcase classname="sandgate.verify.${attr(x.kind)}" name="${attr(xmlSafe(name))}"`;
    if (!found) return `${open}/>`;
    const message = `${found.length} difference${found.length === 1 ? "" : "s"}: ${found.map((d) => `${d.kind} at ${d.path}`).join("; ")}`;
    return `${open}>\n    <failure message="${attr(xmlSafe(message))}" type="difference">${escapeText(xmlSafe(found.map(differenceLine).join("\n")))}</failure>\n  </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="sandgate verify" tests="${report.exchanges.length}" failures="${failures}">`,
    `<testsuite name="sandgate verify against ${attr(report.target)}" tests="${report.exchanges.length}" failures="${failures}">`,
    ...cases,
    "</testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}

/** What --suggest wrote, how to check it, and what data cannot close. */
export function suggestionsReport(s: Suggestions, file: string, recording: string, dir: string): string {
  const lines = [""];
  const rules = s.scenario.rules.length;
  if (rules) {
    lines.push(`wrote ${rules} rule${rules === 1 ? "" : "s"} closing ${s.closes.length} difference${s.closes.length === 1 ? "" : "s"} to ${file}`);
    lines.push(`check them: sandgate verify ${recording} --scenarios ${dir} --scenario ${s.scenario.name}`);
  } else lines.push("no difference can be closed with a scenario rule");
  if (s.defects.length)
    lines.push("", `${s.defects.length} difference${s.defects.length === 1 ? "" : "s"} data cannot close:`, ...s.defects.map((d) => `  ${d}`));
  return `${lines.join("\n")}\n`;
}

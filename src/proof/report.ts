// A verify report three ways: a table for people on the terminal, JSON for scripts (--report), and
// JUnit XML for CI (--junit, one test case per exchange, its differences in <failure>).
import { escapeText } from "../render/xml.js";
import type { Difference, DifferenceKind } from "./compare.js";
import type { Suggestions } from "./suggest.js";
import type { VerifyReport } from "./verify-report.js";

/** What each kind of difference means and what to do about it: the terminal, the README and the dashboard say the same. */
export const KIND_MEANINGS: Record<DifferenceKind, { means: string; todo: string }> = {
  status: { means: "the HTTP status differs", todo: "a Sandgate defect, unless a scenario rule sets `status` for this request" },
  content_type: { means: "the answer's media type differs (XML, JSON, HTML, form)", todo: "a Sandgate defect: report it" },
  missing: { means: "the gateway sent a field, element or notification Sandgate did not", todo: "a Sandgate defect: report it (--ignore the path if your integration never reads it)" },
  extra: { means: "Sandgate sent a field, element or notification the gateway did not", todo: "a Sandgate defect: report it (--ignore the path if your integration never reads it)" },
  order: { means: "the same XML children in another order", todo: "a Sandgate defect: report it (a parser that reads by position breaks on it)" },
  shape: { means: "a value of another form: empty vs set, text vs number, decimals, date format, CODE:text, …", todo: "a Sandgate defect: report it" },
  value: { means: "a value that must agree differs: a status, a result code or text, a currency, an amount, an echoed field", todo: "often closed with data: --suggest writes the scenario rule that gives the gateway's value" },
};

/** The text cut to n characters, an ellipsis saying so. */
export const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * Aligned columns for the terminal, a rule under the head: a column is as wide as its widest cell,
 * at most `max` (longer cells are cut); with `lastFree` the last column is never cut.
 */
export function textTable(head: string[], rows: string[][], max = 48, lastFree = false): string[] {
  const last = head.length - 1;
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const shown = widths.map((w, i) => (lastFree && i === last ? w : Math.min(max, w)));
  const line = (cells: string[]) => cells.map((c, i) => (lastFree && i === last ? c : cut(c, shown[i]!).padEnd(shown[i]!))).join("  ").trimEnd();
  return [line(head), line(shown.map((w, i) => "-".repeat(lastFree && i === last ? head[i]!.length : w))), ...rows.map(line)];
}

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

/** Text for an XML attribute's double quotes. */
export const attr = (s: string) => escapeText(s).replace(/"/g, "&quot;");
/** XML 1.0 cannot hold most control characters, even escaped */
export const xmlSafe = (s: string) =>
  Array.from(s, (c) => {
    const code = c.charCodeAt(0);
    return (code < 0x20 && c !== "\t" && c !== "\n" && c !== "\r") || code === 0xfffe || code === 0xffff ? "\ufffd" : c;
  }).join("");

export function differenceLine(d: Difference): string {
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
  if (s.defects.length) lines.push("", `${s.defects.length} difference${s.defects.length === 1 ? "" : "s"} data cannot close:`, ...s.defects.map((d) => `  ${d}`));
  return `${lines.join("\n")}\n`;
}

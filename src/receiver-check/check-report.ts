// A receiver check's report for people (a table on the terminal) and for CI (JUnit XML: one test
// case per probe; a failure is <failure>, a warning passes with <system-out>, a probe the run did
// not get to is <skipped>, and a stopped run is one more failing case, said once). JSON is the
// report object itself. The house style and helpers are verify's (src/proof/report.ts).
import { escapeText } from "../base/markup.js";
import { attr, textTable, xmlSafe } from "../render/report-text.js";
import type { ProbeResult, ReceiverCheckReport, SendResult } from "./run.js";
import { counted } from "../base/words.js";

/** "401 in 3 ms", or what happened instead of an answer */
const answerOf = (s: SendResult) => (s.http_status === null ? s.error.replace(/^could not deliver: /, "") : `${s.http_status} in ${s.duration_ms} ms`);

function summaryLine(report: ReceiverCheckReport): string {
  const { pass, warning, fail, not_run } = report.summary;
  const counts = [`${pass} pass`, counted(warning, "warning"), counted(fail, "failure"), ...(not_run ? [`${not_run} not run`] : [])].join(", ");
  return `${counted(report.probes.length + not_run, "probe")}: ${counts}${report.passed ? "" : " — the receiver does not pass"}`;
}

export function terminalReport(report: ReceiverCheckReport): string {
  const payment = report.payment === "created" ? "made for the check" : "given";
  const lines = [`receiver check ${report.check} of ${report.url} (merchant ${report.merchant_id}, payment ${report.transaction_id} ${payment})`];
  if (report.probes.length) {
    const rows = report.probes.map((p) => [p.probe, p.sent, p.sends.map(answerOf).join(", "), p.verdict, p.reason]);
    lines.push(...textTable(["probe", "sent", "answer", "verdict", "why"], rows, 48, true));
  }
  if (report.stopped) lines.push("", `stopped: ${report.stopped}`, `not run: ${report.not_run.join(", ")}`);
  // what the failed and warned probes stand for, each practice once
  const whys = new Map<string, string[]>();
  for (const p of report.probes) if (p.verdict !== "pass") whys.set(p.why, [...(whys.get(p.why) ?? []), p.probe]);
  if (whys.size) lines.push("", "what they stand for:", ...[...whys].map(([why, ids]) => `  ${ids.join(", ")}: ${why}`));
  lines.push("", summaryLine(report));
  return `${lines.join("\n")}\n`;
}

function testCase(p: ProbeResult): string {
  const time = (p.sends.reduce((t, s) => t + s.duration_ms, 0) / 1000).toFixed(3);
  const open = `  <testcase classname="sandgate.check-receiver" name="${attr(xmlSafe(`${p.probe}: ${p.sent}`))}" time="${time}"`;
  const detail = [
    p.reason,
    `expects: ${p.expects}`,
    `why: ${p.why}`,
    ...p.sends.map((s) => `${s.event} ${s.notification_id} attempt ${s.attempt}: ${answerOf(s)}${s.response_body ? ` — ${s.response_body}` : ""}`),
  ].join("\n");
  if (p.verdict === "fail")
    return `${open}>\n    <failure message="${attr(xmlSafe(p.reason))}" type="fail">${escapeText(xmlSafe(detail))}</failure>\n  </testcase>`;
  if (p.verdict === "warning") return `${open}>\n    <system-out>${escapeText(xmlSafe(`warning: ${detail}`))}</system-out>\n  </testcase>`;
  return `${open}/>`;
}

export function junitReport(report: ReceiverCheckReport): string {
  const cases = report.probes.map(testCase);
  cases.push(
    ...report.not_run.map(
      (id) =>
        `  <testcase classname="sandgate.check-receiver" name="${attr(id)}">\n    <skipped message="${attr(xmlSafe(`not run: ${report.stopped}`))}"/>\n  </testcase>`,
    ),
  );
  if (report.stopped)
    cases.push(
      `  <testcase classname="sandgate.check-receiver" name="the receiver answers">\n    <failure message="${attr(xmlSafe(report.stopped))}" type="stopped"/>\n  </testcase>`,
    );
  const failures = report.summary.fail + (report.stopped ? 1 : 0);
  const counts = `tests="${cases.length}" failures="${failures}" skipped="${report.not_run.length}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="sandgate check-receiver" ${counts}>`,
    `<testsuite name="sandgate check-receiver of ${attr(xmlSafe(report.url))}" ${counts}>`,
    ...cases,
    "</testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}

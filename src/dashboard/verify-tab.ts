// The dashboard's Verify tab: a tester picks a recording of the real gateway (a HAR file) and sees
// how a fresh Sandgate's answers differ from it. The page itself holds nothing from a recording:
// assets/verify.js reads the file, posts it to POST /__sandbox/verify and builds the report with
// textContent only. The legend of difference kinds is KIND_MEANINGS, as the terminal report says it.
import { DIFFERENCE_KINDS, KIND_MEANINGS } from "../verify-report/verify-report.js";
import { e, frame, table } from "./frame.js";
import { callPath } from "../api/operator-calls.js";

/** KIND_MEANINGS' texts mark flags and fields with backticks: shown as code, everything else escaped. */
const withCode = (text: string) => e(text).replace(/`([^`]+)`/g, "<code>$1</code>");

export function verifyPage(globalScenario: string, limitBytes: number): string {
  // the kind in bold, not code: table cells break code anywhere, and content_type would split
  const legend = DIFFERENCE_KINDS.map((kind) => [
    `<strong id="kind-${kind}">${e(kind)}</strong>`,
    withCode(KIND_MEANINGS[kind].means),
    withCode(KIND_MEANINGS[kind].todo),
  ]);
  return frame(
    "Verify a recording",
    "verify",
    `<h1>Verify a recording</h1>
<p>Replays a recording of the real gateway (a HAR file from <code>sandgate record</code> or a browser's dev tools) against a fresh Sandgate with this sandbox's fixtures, scenario folder and global scenario <code id="verify-scenario">${e(globalScenario)}</code>. It lists every answer and notification that differs from the recording, and leaves this sandbox's own transactions, requests and notifications as they are.</p>
<form class="card row" id="verify-form" data-endpoint="${callPath("verifyRecording")}" data-limit="${e(limitBytes)}">
<div><label for="verify-file">Recording (HAR, up to ${e(Math.round(limitBytes / 1024 / 1024))} MB)</label><input type="file" id="verify-file" name="har" accept=".har,.json,application/json" required></div>
<div><label for="verify-ignore">Ignore paths</label><input id="verify-ignore" name="ignore" placeholder="respon.risk_score, orders_list[*].transaction_date"></div>
<div class="shrink"><label for="verify-suggest">Scenario rules</label><select id="verify-suggest" name="suggest"><option value="">not suggested</option><option value="1">suggest the rules data can close</option></select></div>
<div class="shrink"><button type="submit" id="verify-submit">Verify</button></div>
</form>
<noscript><p class="flash bad">This page sends the file with JavaScript. Without it: <code>curl --data-binary @recording.har -H 'Content-Type: application/json' ${callPath("verifyRecording")}</code></p></noscript>
<p class="hint">The same as <code>sandgate verify &lt;file.har&gt;</code>; as JSON for scripts: <code>POST ${callPath("verifyRecording")}</code> with the HAR as the body, <code>?ignore=&lt;path&gt;</code> (repeatable) and <code>?suggest=1</code>.</p>
<div id="verify-message" role="status"></div>
<div id="verify-result"></div>
<section class="card" id="verify-legend"><h2>Kinds of difference</h2>${table(["Kind", "What it means", "What to do"], legend, "verify-kinds")}</section>`,
    undefined,
    ["report-dom.js", "verify.js"],
  );
}

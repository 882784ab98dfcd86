// The dashboard's first page: scenarios (global, bindings, the list), the clock, snapshots, reset.
import type { Scenario } from "../scenarios/schema.js";
import { BASE, e, frame, options, postButton, table, type Flash } from "./frame.js";
import { formPath } from "../api/operator-calls.js";
import type { ClockReading } from "../admin/clock-moves.js";
import { durationText } from "../base/words.js";

const ahead = (c: ClockReading) => `${durationText(c.offset_ms)} ahead of real time${c.frozen ? ", frozen" : ""}`;

/**
 * The clock card: the sandbox's time, each merchant's whose clock differs (with its offset), and one
 * form whose buttons move the chosen clock: advance, set to a later moment, freeze, unfreeze.
 */
function clockCard(d: OverviewData): string {
  const { sandbox, merchants } = d.clocks;
  const own = merchants.map((c) => [`<code>${e(c.merchant_id ?? "")}</code>`, e(c.now), e(ahead(c))]);
  return `<section class="card" id="clock">
<h2>Clock</h2>
<p>Sandbox time: <strong id="clock-now">${e(sandbox.now)}</strong> <span class="hint" id="clock-offset">(${e(ahead(sandbox))})</span></p>
${merchants.length ? `<p class="hint">Merchants on a clock of their own:</p>${table(["Merchant", "Its time", "Offset"], own, "merchant-clocks")}` : ""}
<form method="post" action="${formPath("advanceClock")}" class="clock-form">
<div><label for="clock-merchant">Whose clock</label><select id="clock-merchant" name="merchant_id"><option value="">The sandbox's (every merchant)</option>${options(d.merchants, "")}</select></div>
<div class="row">
<div><label for="advance">Advance by</label><input id="advance" name="advance" placeholder="90s, 2h, 3d, 1w"></div>
<div class="shrink"><button type="submit" id="advance-clock">Advance</button></div>
</div>
<div class="row">
<div><label for="clock-to">Set to (UTC, later only)</label><input id="clock-to" name="to" type="datetime-local" step="1"></div>
<div class="shrink"><button type="submit" id="set-clock" formaction="${formPath("setClock")}" class="secondary">Set</button></div>
</div>
<div class="row">
<div class="shrink"><button type="submit" id="freeze-clock" formaction="${formPath("freezeClock")}" class="secondary">Freeze</button></div>
<div class="shrink"><button type="submit" id="unfreeze-clock" formaction="${formPath("unfreezeClock")}" class="secondary">Unfreeze</button></div>
</div>
</form>
<p class="hint">Refunds settle, payouts move on and subscriptions charge as their time comes. A frozen clock stands still until unfrozen; advancing or setting it still moves it. One merchant's clock moves that merchant's time only (a CI job's), every other merchant's stays.</p>
</section>`;
}

export interface OverviewData {
  global: string;
  bindings: Record<string, string>;
  scenarios: Scenario[];
  errors: string[];
  merchants: string[];
  /** every merchant's secret key: the dashboard is behind ADMIN_TOKEN when one is set */
  keys: { merchant_id: string; name: string; secret_key: string }[];
  /** the sandbox's clock, and each merchant's that differs from it */
  clocks: { sandbox: ClockReading; merchants: ClockReading[] };
  /** QA snapshots kept, newest first */
  snapshots: { name: string; merchant: string | null; saved_at: string; records: number }[];
}

export function overviewPage(d: OverviewData, flash?: Flash): string {
  const names = d.scenarios.map((s) => s.name);
  const bindings = Object.entries(d.bindings).map(([merchant, name]) => [
    `<code>${e(merchant)}</code>`,
    `<form method="post" action="${formPath("bindScenario")}" class="inline"><input type="hidden" name="merchant_id" value="${e(merchant)}"><select name="name" aria-label="scenario for ${e(merchant)}">${options(names, name)}</select> <button type="submit" class="small secondary">Change</button></form>`,
    postButton(`${formPath("unbindScenario")}`, "Remove", { merchant_id: merchant }, { kind: "danger", test: `unbind-${merchant}` }),
  ]);
  const list = d.scenarios.map((s) => [
    `<a href="${BASE}/ui/scenarios/${encodeURIComponent(s.name)}">${e(s.name)}</a>`,
    e(s.description),
    e(s.extends.join(", ") || "—"),
    String(s.rules.length),
  ]);
  const errors = d.errors.length
    ? `<div class="flash bad"><strong>Scenario files with errors</strong> (their previous version stays in force):<ul>${d.errors.map((x) => `<li><code>${e(x)}</code></li>`).join("")}</ul></div>`
    : "";
  return frame(
    "Overview",
    "overview",
    `<h1>Sandgate sandbox</h1>
${errors}
<div class="grid2">
<section class="card" id="global-scenario">
<h2>Global scenario</h2>
<p class="hint">Used for every merchant without a binding (a request's <code>X-Sandbox-Scenario</code> header still wins).</p>
<form method="post" action="${formPath("setGlobalScenario")}" class="row">
<div><label for="global-name">Scenario</label><select id="global-name" name="name">${options(names, d.global)}</select></div>
<div class="shrink"><button type="submit" id="set-global">Set global scenario</button></div>
</form>
<p>In force now: <strong id="current-global">${e(d.global)}</strong></p>
</section>
${clockCard(d)}
</div>
<section class="card" id="bindings">
<h2>Merchant bindings</h2>
${table(["Merchant", "Scenario", ""], bindings, "bindings-table")}
<form method="post" action="${formPath("bindScenario")}" class="row">
<div><label for="bind-merchant">Merchant id</label><input id="bind-merchant" name="merchant_id" list="known-merchants" required></div>
<div><label for="bind-name">Scenario</label><select id="bind-name" name="name">${options(names, "")}</select></div>
<div class="shrink"><button type="submit" id="bind">Bind</button></div>
</form>
<datalist id="known-merchants">${d.merchants.map((m) => `<option value="${e(m)}">`).join("")}</datalist>
</section>
<section class="card" id="merchant-keys">
<h2>Merchants and their keys</h2>
<p class="hint">The key each merchant signs with (<code>encryption_data</code>). A merchant id Sandgate has not seen is provisioned on first use, its key <code>sk_test_&lt;id&gt;</code>, or a random one with <code>--merchant-keys random</code> (<code>sandgate ctl merchant key &lt;id&gt;</code> prints it).</p>
${table(
  ["Merchant", "Name", "Key"],
  d.keys.map((k) => [`<code>${e(k.merchant_id)}</code>`, e(k.name), `<code class="key">${e(k.secret_key)}</code>`]),
  "merchant-keys-table",
)}
</section>
<section class="card" id="scenarios">
<h2>Scenarios</h2>
<p class="hint">Write one in the browser: <a href="${BASE}/ui/scenario-editor" id="new-scenario">the scenario editor</a> (or open a scenario below and edit a copy).</p>
${table(["Name", "Description", "Extends", "Rules"], list)}
</section>
<section class="card" id="snapshots">
<h2>Snapshots</h2>
<p class="hint">Keep the state as it is now under a name (every merchant, or one), and put it back after a test run changed it. Kept where the state is kept; a reset leaves them.</p>
${table(
  ["Name", "Holds", "Saved (sandbox time)", "Records", ""],
  d.snapshots.map((s) => [
    `<code>${e(s.name)}</code>`,
    s.merchant === null ? "every merchant" : `merchant <code>${e(s.merchant)}</code>`,
    e(s.saved_at),
    String(s.records),
    // a snapshot of every merchant says so when it is put back (it replaces every merchant's records)
    postButton(
      `${formPath("restoreSnapshot", { name: s.name })}`,
      s.merchant === null ? "Restore all" : "Restore",
      s.merchant === null ? { all: "true" } : {},
      { test: `restore-${s.name}` },
    ) +
      " " +
      postButton(`${formPath("deleteSnapshot", { name: s.name })}`, "Delete", {}, { kind: "danger", test: `delete-${s.name}` }),
  ]),
  "snapshots-table",
)}
<form method="post" action="${formPath("saveSnapshot")}" class="row">
<div><label for="snapshot-name">Name</label><input id="snapshot-name" name="name" placeholder="past-due-customer" pattern="[A-Za-z0-9_.\\-]{1,64}" required></div>
<div><label for="snapshot-merchant">Of</label><select id="snapshot-merchant" name="merchant_id"><option value="">Every merchant</option>${options(d.merchants, "")}</select></div>
<div class="shrink"><button type="submit" id="save-snapshot">Save snapshot</button></div>
</form>
</section>
<section class="card" id="reset">
<h2>Reset</h2>
<p class="hint">Back to the bundled fixtures: every merchant, or one. You will be asked to confirm.</p>
<form method="post" action="${formPath("resetState")}" class="row">
<div><label for="reset-merchant">What</label><select id="reset-merchant" name="merchant_id"><option value="">Everything (all merchants)</option>${options(d.merchants, "")}</select></div>
<div class="shrink"><button type="submit" class="danger" id="reset-start">Reset…</button></div>
</form>
</section>`,
    flash,
  );
}

/** A scenario's rules as a table: when → then, in the order they are tried. */
export function scenarioPage(s: Scenario, merchants: string[] = [], flash?: Flash): string {
  const show = (v: unknown) => e(typeof v === "string" ? v : JSON.stringify(v));
  const rows = s.rules.map((r, i) => [
    String(i + 1),
    `<code>${e(r.from === s.name ? r.id : `${r.from}/${r.id}`)}</code>${r.description ? `<div class="hint">${e(r.description)}</div>` : ""}`,
    Object.entries(r.when)
      .map(([k, v]) => `<div><code>${e(k)}</code> = ${show(v)}</div>`)
      .join(""),
    Object.entries(r.then)
      .map(([k, v]) => `<div><code>${e(k)}</code>: ${show(v)}</div>`)
      .join(""),
  ]);
  return frame(
    `Scenario ${s.name}`,
    "overview",
    `<h1>Scenario <code>${e(s.name)}</code></h1>
<section class="card"><p>${e(s.description)}</p><p class="hint">File <code>${e(s.file)}</code>${s.extends.length ? `; extends ${e(s.extends.join(", "))}` : ""}. The first matching rule decides (a rule with <code>continue</code> adds its effects and lets the next one decide).</p></section>
<section class="card">${table(["#", "Rule", "When", "Then"], rows, "rules")}</section>
<section class="card row" id="scenario-actions">
<form method="post" action="${formPath("bindScenario")}" class="row" id="scenario-bind"><input type="hidden" name="name" value="${e(s.name)}"><input type="hidden" name="back" value="${BASE}/ui/scenarios/${encodeURIComponent(s.name)}">
<div><label for="scenario-bind-merchant">Bind a merchant to it</label><input id="scenario-bind-merchant" name="merchant_id" list="scenario-merchants" required></div>
<div class="shrink"><button type="submit" id="scenario-bind-button">Bind</button></div>
<datalist id="scenario-merchants">${merchants.map((m) => `<option value="${e(m)}">`).join("")}</datalist>
</form>
<p><a class="button" id="scenario-edit" href="${BASE}/ui/scenario-editor?from=${encodeURIComponent(s.name)}">Open in the editor</a></p>
</section>`,
    flash,
  );
}

export function confirmResetPage(merchant: string): string {
  const what = merchant ? `merchant ${merchant}` : "everything (all merchants, bindings stay)";
  return frame(
    "Confirm reset",
    "overview",
    `<h1>Reset ${e(what)}?</h1>
<section class="card"><p>Transactions, refunds, payouts, subscriptions, tokens and notifications go back to the bundled fixtures. This cannot be undone.</p>
<form method="post" action="${formPath("resetState")}"><input type="hidden" name="merchant_id" value="${e(merchant)}"><input type="hidden" name="confirm" value="yes">
<button type="submit" class="danger" id="reset-confirm">Yes, reset ${e(what)}</button> <a href="${BASE}/">Cancel</a></form></section>`,
  );
}

export function loginPage(error: string): string {
  return frame(
    "Sign in",
    "",
    `<h1>Sign in</h1>
<section class="card"><p>This Sandgate is guarded by an admin token (<code>ADMIN_TOKEN</code>). Ask whoever started it.</p>
${error ? `<p class="error" id="login-error">${e(error)}</p>` : ""}
<form method="post" action="${BASE}/login"><label for="token">Admin token</label><input id="token" name="token" type="password" autocomplete="current-password" required>
<p><button type="submit" id="login">Sign in</button></p></form></section>`,
  );
}

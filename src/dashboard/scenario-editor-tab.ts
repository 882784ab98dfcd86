// The dashboard's scenario editor: a scenario's text (YAML or JSON) in a text area, checked as it is
// typed (every problem beside its line, assets/scenario-editor.js asking checkScenario), a sample
// request tried against it ("which rule answers this?"), saved as a scenario of its own, then
// bound to a merchant from its page. Without the script the save still checks it and shows the
// problems here: a scenario with a problem is never saved.
import { stringify } from "yaml";
import { BASE, e, frame, options, type Flash } from "./frame.js";
import { callPath, formPath } from "../api/operator-calls.js";
import { RULE_OPERATIONS, type ScenarioFile } from "../scenarios/schema.js";
import type { SourceProblem } from "../scenarios/scenario-check.js";
import type { ScenarioRegistry } from "../scenarios/registry.js";
import { parse } from "yaml";

export interface EditorData {
  source: string;
  /** what the text was opened from, in words ("a copy of the shipped scenario default") */
  from: string;
  /** every scenario's name, to start from another */
  names: string[];
  /** where a save goes: the --scenarios folder, or the sandbox's state */
  savesTo: "folder" | "state";
  problems: SourceProblem[];
}

/** A new scenario's first text: one rule on top of the default scenario's. */
export const STARTER = `name: my-scenario
description: Declines one card with insufficient funds; everything else as in default.
extends: default
rules:
  - id: my-card-is-short-of-funds
    when: { operation: authorise, card: "4111111111111111" }
    then: { outcome: insufficient_funds }
`;

/** A shipped scenario opened in the editor: its file as YAML, under a name of its own (a copy is saved, never the shipped file). */
function copyOf(file: ScenarioFile): string {
  return stringify({ ...file, name: `${file.name}-copy`, description: `A copy of ${file.name}: ${file.description}` }, { lineWidth: 0 });
}

/** A scenario as the editor opens it: its own text (a saved one, or a file of the merchant's folder), or a copy of a shipped one. */
export function openInEditor(registry: ScenarioRegistry, name: string): { source: string; from: string } | undefined {
  const found = registry.sourceOf(name);
  if (!found) return undefined;
  if (!found.shipped) return { source: found.text, from: `scenario ${name}${found.own ? " (saved in the state)" : " (its file)"}` };
  return { source: copyOf(parse(found.text) as ScenarioFile), from: `a copy of the shipped scenario ${name} (saved under its own name)` };
}

const problemRows = (problems: readonly SourceProblem[]): string =>
  problems
    .map(
      (p) =>
        `<li data-line="${e(p.line)}">${p.line ? `<strong>line ${e(p.line)}</strong> ` : ""}${p.path ? `<code>${e(p.path)}</code> ` : ""}${e(p.message)}</li>`,
    )
    .join("");

export function editorPage(d: EditorData, flash?: Flash): string {
  const where =
    d.savesTo === "folder"
      ? "Saved into the --scenarios folder, as a file of its own (its name)."
      : "Saved into the sandbox's state: kept beside --data, shared by every replica on Redis, and in state exports.";
  const sample = JSON.stringify({ card: "4111111111111111", amount: "10.00", currency: "USD" }, null, 1);
  return frame(
    "Scenario editor",
    "overview",
    `<h1>Scenario editor</h1>
<form method="get" action="${BASE}/ui/scenario-editor" class="card row" id="editor-open">
<div><label for="editor-from">Start from</label><select id="editor-from" name="from"><option value="">a new scenario</option>${options(d.names, "")}</select></div>
<div class="shrink"><button type="submit" class="secondary" id="editor-open-button">Open</button></div>
</form>
<section class="card" id="editor">
<p class="hint">Opened: ${e(d.from)}. Rules as in a scenario file (docs/scenarios.md): the first that matches decides. Checked as you type, against the schema and the scenarios in force. ${e(where)} A scenario with a problem is never saved.</p>
<form method="post" action="${formPath("saveScenario")}" id="editor-form" data-check="${callPath("checkScenario")}">
<label for="editor-source">Scenario (YAML or JSON)</label>
<textarea id="editor-source" name="source" rows="22" spellcheck="false" autocomplete="off" class="mono">${e(d.source)}</textarea>
<p id="editor-state" class="hint" aria-live="polite">${d.problems.length ? `${e(d.problems.length)} problem${d.problems.length === 1 ? "" : "s"}: not saved.` : ""}</p>
<ul class="errors" id="editor-problems">${problemRows(d.problems)}</ul>
<p><button type="submit" id="editor-save">Save scenario</button></p>
</form>
</section>
<section class="card" id="editor-try">
<h2>Which rule answers this?</h2>
<p class="hint">A request as the merchant would send it, tried against the text above as it is now (nothing is saved or sent).</p>
<div class="row">
<div class="shrink"><label for="try-operation">Operation</label><select id="try-operation">${options([...RULE_OPERATIONS], "authorise")}</select></div>
<div><label for="try-fields">Fields (JSON)</label><textarea id="try-fields" rows="4" spellcheck="false" class="mono">${e(sample)}</textarea></div>
</div>
<p><button type="button" class="secondary" id="try-run">Try it</button></p>
<p id="try-answer" aria-live="polite"></p>
</section>`,
    flash,
    "scenario-editor.js",
  );
}

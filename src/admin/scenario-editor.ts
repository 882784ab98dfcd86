// Saving a scenario from the editor (the JSON API and the dashboard's form both call this): checked
// first (a scenario with a problem is never saved and nothing changes), then saved where the
// registry keeps it, and committed, so every replica has it.
import type { Deps } from "../deps/deps.js";
import type { SourceProblem } from "../scenarios/scenario-check.js";

type Saved = { name: string; saved_to: "folder" | "state"; file?: string; replaced: boolean };

/** the problems as one sentence: "line 4, rules.0.when.operation: ..." */
const problemsText = (problems: readonly SourceProblem[]): string =>
  problems.map((p) => `${p.line ? `line ${p.line}` : ""}${p.line && p.path ? ", " : ""}${p.path}${p.line || p.path ? ": " : ""}${p.message}`).join("; ");

export async function saveScenario(deps: Deps, source: string): Promise<{ saved: Saved } | { problems: SourceProblem[]; message: string }> {
  // a browser's form sends a text area's lines ending CR LF: kept as a file would be
  const done = deps.scenarios.save(source.replace(/\r\n?/g, "\n"));
  if ("problems" in done) return { problems: done.problems, message: `not saved: ${problemsText(done.problems)}` };
  await deps.store.commit(); // with a shared store, the saved scenarios go to every replica
  const { name, to, file, replaced } = done.saved;
  return { saved: { name, saved_to: to, ...(file ? { file } : {}), replaced } };
}

// Reads every scenario file of a folder (JSON or YAML), validates it, and resolves `extends`.
// Each problem is reported as "<file>: at <path>: <reason>".
import { readdirSync, readFileSync } from "node:fs";
import { basename, extname, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { catalogueHas } from "../domain/outcomes.js";
import { defaultScenariosDir } from "../base/paths.js";
import { RULE_OPERATIONS, scenarioFileSchema, type Scenario, type ScenarioFile } from "./schema.js";

const EXTENSIONS = new Set([".json", ".yaml", ".yml"]);

export interface LoadedFile {
  file: string;
  name: string;
  scenario?: ScenarioFile;
  error?: string;
}

/**
 * The scenario files in force for a --scenarios folder: the shipped ones, then the folder's. A
 * merchant's folder adds to the shipped scenarios (so `extends: default` works), and its file wins
 * when it has a shipped scenario's name.
 */
export function layeredScenarioFiles(dir: string): string[] {
  const own = scenarioFiles(dir);
  if (resolve(dir) === resolve(defaultScenariosDir)) return own;
  const ownNames = new Set(own.map((f) => basename(f, extname(f))));
  return [...scenarioFiles(defaultScenariosDir).filter((f) => !ownNames.has(basename(f, extname(f)))), ...own];
}

function scenarioFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => EXTENSIONS.has(extname(f)) && !f.endsWith(".schema.json"))
    .sort()
    .map((f) => resolve(dir, f));
}

/** Reads and validates one file; never throws. */
export function loadFile(file: string): LoadedFile {
  const name = basename(file, extname(file));
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    return { file, name, error: `${file}: cannot parse: ${(err as Error).message.split("\n")[0]}` };
  }
  return loadSource(file, name, text, extname(file) === ".json" ? "json" : "yaml");
}

/** Validates a scenario's text (a file's, or one saved from the dashboard's editor, named `file` in its errors); never throws. */
export function loadSource(file: string, name: string, text: string, format: "json" | "yaml"): LoadedFile {
  let raw: unknown;
  try {
    raw = format === "json" ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    return { file, name, error: `${file}: cannot parse: ${(err as Error).message.split("\n")[0]}` };
  }
  const parsed = scenarioFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { file, name, error: `${file}: at ${issue.path.map(String).join(".") || "(root)"}: ${issue.message}` };
  }
  const scenario = parsed.data;
  if (scenario.name !== name) return { file, name, error: `${file}: at name: "${scenario.name}" must equal the file name "${name}"` };
  const unknown = unknownName(scenario);
  if (unknown) return { file, name, error: `${file}: at ${unknown}` };
  return { file, name, scenario };
}

/** A rule naming an operation that does not exist (it could never match), or an outcome its operation's catalogue lacks. */
export function unknownName(scenario: ScenarioFile): string | undefined {
  for (const [i, rule] of scenario.rules.entries()) {
    const op = rule.when.operation;
    const ops = typeof op === "string" ? [op] : Array.isArray(op) ? op.map(String) : [];
    const stray = ops.find((o) => !RULE_OPERATIONS.includes(o));
    if (stray !== undefined) return `rules.${i}.when.operation: "${stray}" is not an operation (${RULE_OPERATIONS.join(", ")})`;
    const outcome = rule.then.outcome;
    if (!outcome) continue;
    const missing = ops.length ? ops.filter((o) => !catalogueHas(o, outcome)) : catalogueHas(undefined, outcome) ? [] : ["any operation"];
    if (missing.length) return `rules.${i}.then.outcome: "${outcome}" is not an outcome of ${missing.join(", ")} (see data/outcomes.json)`;
  }
  return undefined;
}

/** Resolves `extends` for every valid file; a scenario whose chain is broken gets an error instead. */
export function resolveAll(files: LoadedFile[]): { scenarios: Map<string, Scenario>; errors: string[] } {
  const byName = new Map(files.filter((f) => f.scenario).map((f) => [f.name, f]));
  const scenarios = new Map<string, Scenario>();
  const errors = files.filter((f) => f.error).map((f) => f.error!);
  for (const f of byName.values()) {
    try {
      scenarios.set(f.name, resolveOne(f.name, byName, []));
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  return { scenarios, errors };
}

function resolveOne(name: string, byName: Map<string, LoadedFile>, chain: string[]): Scenario {
  const f = byName.get(name)!;
  const parents = [f.scenario!.extends ?? []].flat();
  const own = f.scenario!.rules.map((r) => ({ ...r, from: name }));
  const inherited: Scenario["rules"] = [];
  for (const parent of parents) {
    if (chain.includes(parent) || parent === name) throw new Error(`${f.file}: at extends: cycle ${[...chain, name, parent].join(" → ")}`);
    if (!byName.has(parent)) throw new Error(`${f.file}: at extends: no valid scenario "${parent}"`);
    for (const rule of resolveOne(parent, byName, [...chain, name]).rules) if (!inherited.some((r) => r.id === rule.id)) inherited.push(rule);
  }
  // A rule with a parent's id, or naming it in `replaces`, takes that rule's place where the parent
  // had it (so a catch-all can be overridden without shadowing the rules before it); the others
  // come first, in their order.
  const replacing = new Set<object>();
  const merged = inherited.map((rule) => {
    const override = own.find((r) => (r.replaces ?? r.id) === rule.id);
    if (!override) return rule;
    replacing.add(override);
    return override;
  });
  const missing = own.find((r) => r.replaces !== undefined && !replacing.has(r));
  if (missing) throw new Error(`${f.file}: at rules: "${missing.id}" replaces "${missing.replaces}", which no parent scenario has`);
  const rules = [...own.filter((r) => !replacing.has(r)), ...merged];
  return { name, description: f.scenario!.description, extends: parents, file: f.file, rules };
}

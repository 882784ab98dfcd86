// A scenario's text checked as the dashboard's editor needs it: every problem, each with the path
// it is at and the line of the text it is on (the YAML or JSON as typed), and the scenario it
// would be once resolved against those in force. Files are checked by loader.ts, which stops at the
// first problem; this says them all, so the editor can show each beside its line.
import { LineCounter, parseDocument, type Document } from "yaml";
import { scenarioFileSchema, type Scenario, type ScenarioFile, type Then } from "./schema.js";
import { resolveAll, unknownName, type LoadedFile } from "./loader.js";
import { evaluate } from "./conditions.js";

export interface SourceProblem {
  /** where in the scenario: "rules.2.when.operation", or "" for the whole text */
  path: string;
  /** the line of the text it is on, from 1 (0: not one line) */
  line: number;
  message: string;
}

/** A scenario name the editor may save under: letters, digits, - and _ (it becomes a file name). */
const SCENARIO_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

/** The text parsed and validated: the scenario file it holds, or every problem found. */
function checkSource(text: string): { scenario?: ScenarioFile; problems: SourceProblem[] } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length) {
    return { problems: doc.errors.map((err) => ({ path: "", line: err.linePos?.[0].line ?? 0, message: err.message.split("\n")[0]! })) };
  }
  const lineOf = (path: (string | number)[]) => lineIn(doc, lines, path);
  let raw: unknown;
  try {
    raw = doc.toJS();
  } catch (err) {
    // an alias to no anchor (`*x`) parses, and fails only here
    return { problems: [{ path: "", line: 0, message: (err as Error).message.split("\n")[0]! }] };
  }
  const parsed = scenarioFileSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      problems: parsed.error.issues.map((issue) => {
        const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
        return { path: path.join("."), line: lineOf(path), message: issue.message };
      }),
    };
  }
  const scenario = parsed.data;
  const problems: SourceProblem[] = [];
  if (!SCENARIO_NAME.test(scenario.name))
    problems.push({ path: "name", line: lineOf(["name"]), message: "letters, digits, - and _ only (at most 64): it names a file" });
  const unknown = unknownName(scenario);
  if (unknown) {
    const [path, message] = unknown.split(/: (.*)/s) as [string, string];
    problems.push({ path, line: lineOf(path.split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : p))), message });
  }
  return problems.length ? { problems } : { scenario, problems };
}

/** The line the node at `path` starts on, or the nearest parent's that exists. */
function lineIn(doc: Document, lines: LineCounter, path: (string | number)[]): number {
  for (let n = path.length; n >= 0; n--) {
    const node = n ? doc.getIn(path.slice(0, n), true) : doc.contents;
    const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
    if (range) return lines.linePos(range[0]).line;
  }
  return 0;
}

/** A request to try a scenario with: which rule answers it? */
export interface SampleRequest {
  operation: string;
  fields: Record<string, unknown>;
  /** the nth call for its order_no (default 1) */
  nth?: number;
}

export interface CandidateCheck {
  name?: string;
  problems: SourceProblem[];
  /** resolved against the scenarios in force (its parents' rules included): when there is no problem */
  scenario?: Scenario;
  /** the sample's answer: the rules that matched (none: the operation's default answer) and what they say */
  answer?: { rules: string[]; then: Then };
}

/**
 * A scenario's text checked as a candidate beside `files` (those in force; one of the same name is
 * what it would replace): every problem with its line, its `extends` resolved, and when a sample
 * is given, which of its rules answers it.
 */
export function checkCandidate(text: string, files: readonly LoadedFile[], sample?: SampleRequest): CandidateCheck {
  const { scenario, problems } = checkSource(text);
  if (!scenario) return { problems };
  const candidate: LoadedFile = { file: `scenario ${scenario.name}`, name: scenario.name, scenario };
  const { scenarios, errors } = resolveAll([...files.filter((f) => f.name !== scenario.name), candidate]);
  const resolved = scenarios.get(scenario.name);
  if (!resolved) {
    const own = errors.find((e) => e.startsWith(`${candidate.file}: `)) ?? `${candidate.file}: at extends: cannot be resolved`;
    const [, path = "", message = own] = /^[^:]+: at ([^:]+): (.*)$/s.exec(own) ?? [];
    const lines = new LineCounter();
    const line = lineIn(parseDocument(text, { lineCounter: lines }), lines, path.split("."));
    return { name: scenario.name, problems: [{ path, line, message }] };
  }
  const answer = sample && evaluate(resolved.rules, { operation: sample.operation, fields: sample.fields, nth: sample.nth ?? 1 });
  return { name: scenario.name, problems: [], scenario: resolved, ...(answer ? { answer: { rules: answer.matched, then: answer.then } } : {}) };
}

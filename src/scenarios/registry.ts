// The scenarios in force: loaded from the folder at start (a broken file stops the start), reloaded
// when a file changes (a broken file is reported and its previous good version stays), the global
// scenario, per-merchant bindings, and the decision for a request:
//   X-Sandbox-Outcome header (names the outcome itself, see outcome-header.ts)
//     >  X-Sandbox-Scenario header  >  the scenario bound to the merchant  >  the global scenario.
import { NO_RULE } from "../base/words.js";
import { readFileSync, watch, type FSWatcher } from "node:fs";
import { writeWhole } from "../base/write-whole.js";
import { basename, dirname, extname, join, resolve } from "node:path";
import { defaultScenariosDir } from "../base/paths.js";
import { GatewayError } from "../domain/codes.js";
import { cardNumbersNamed, evaluate } from "./conditions.js";
import { layeredScenarioFiles, loadFile, loadSource, resolveAll, type LoadedFile } from "./loader.js";
import { checkCandidate, type CandidateCheck, type SampleRequest, type SourceProblem } from "./scenario-check.js";
import { Coverage } from "./coverage.js";
import { checkRequestOutcome, outcomeRule } from "./outcome-header.js";
import type { Scenario, Then } from "./schema.js";

export interface Decision {
  /** the scenario that decided, and how it was chosen ("" when X-Sandbox-Outcome named the outcome: no scenario decided) */
  scenario: string;
  chosenBy: "outcome" | "header" | "merchant" | "global";
  /** "<scenario>/<rule id>" (the rule's own scenario when inherited), for X-Sandbox-Rule and the log */
  rule: string;
  /** the named outcome, or the operation's fallback when the rule names none or nothing matched */
  outcome: string;
  then: Then;
}

interface DecideInput {
  operation: string;
  fields: Record<string, unknown>;
  merchantId: string;
  /** the X-Sandbox-Scenario header, if sent */
  header?: string | undefined;
  /** the X-Sandbox-Outcome header, if sent: the outcome itself, stronger than any scenario */
  outcome?: string | undefined;
  /** what "nth call" counts: calls of this operation for this order_no (per merchant) */
  orderNo?: string;
  fallback: string;
}

export interface ScenarioRegistry {
  list(): Scenario[];
  get(name: string): Scenario | undefined;
  global(): string;
  setGlobal(name: string): void;
  bindings(): Record<string, string>;
  bind(merchantId: string, name: string): void;
  unbind(merchantId: string): boolean;
  /** problems found by the last load or reload, "<file>: at <path>: <reason>" */
  errors(): string[];
  reload(): string[];
  decide(input: DecideInput): Decision;
  /** Does a rule of any scenario loaded name this card number (a value, a list, equals, in or not on `card`)? */
  namesCard(number: string): boolean;
  /** which rules decided answers and which outcomes were produced, per merchant */
  readonly coverage: Coverage;
  /** forgets nth-call counts (all, or one merchant's) */
  resetCounters(merchantId?: string): void;
  /** a scenario's text as the editor opens it: its file's, or a saved one's (`own`: saved from the editor into the state) */
  sourceOf(name: string): { text: string; own: boolean; shipped: boolean } | undefined;
  /** a scenario's text checked as the editor's candidate: every problem with its line; with a sample, the rule that answers it */
  check(text: string, sample?: SampleRequest): CandidateCheck;
  /**
   * Saves a scenario's text (checked first: one with a problem is never saved, and nothing changes):
   * into the --scenarios folder when it is one of the merchant's own and writable, else into the
   * sandbox's state. A shipped scenario's name is refused (save a copy under another).
   */
  save(text: string): { saved: { name: string; to: "folder" | "state"; file?: string; replaced: boolean } } | { problems: SourceProblem[] };
  /** the scenarios saved into the state, name → text */
  own(): Record<string, string>;
  /** where save() puts a scenario */
  savesTo(): "folder" | "state";
  /** with a shared store: what the replicas share of the scenario choice, and adopting theirs */
  choice(): ScenarioChoice;
  adopt(choice: ScenarioChoice): void;
  /** moves each time the choice (the global scenario, a binding) changes: a store that keeps it writes it again then */
  choiceVersion(): number;
  /** with a shared store: nth-call counts changed since the last call, and setting one as another replica left it */
  takeCounts(): [string, number][];
  setCount(key: string, n: number): void;
  close(): void;
}

export interface ScenarioChoice {
  global: string;
  bindings: Record<string, string>;
  /** the scenarios saved from the editor into the state, name → text */
  own?: Record<string, string>;
}

/** Scenarios saved into the state at most, and the longest text one may be. */
const OWN_LIMIT = 100;
const OWN_TEXT_LIMIT = 64 * 1024;

/** "nth call" counts kept at most (one per merchant, operation and order_no): those unused longest are forgotten first. */
export const NTH_COUNTER_LIMIT = 100_000;

class ScenarioError extends Error {
  override name = "ScenarioError";
}

export interface RegistryOptions {
  dir: string;
  global: string;
  watch: boolean;
  onReload?: (errors: string[]) => void;
  /** the folder the editor saves into (a --scenarios folder of the merchant's own, writable); none: into the state */
  saveDir?: string;
  /** scenarios saved into the state before (the --data file's), name → text */
  saved?: Record<string, string>;
  /** hears of every change to the scenarios saved into the state (to keep them with the --data file) */
  onSaved?: (own: Record<string, string>) => void;
}

/** "<scenario>/(no rule)", made once per scenario name (most orders of a batch match no rule) */
const noRuleNames = new Map<string, string>();
function noRule(scenario: string): string {
  let name = noRuleNames.get(scenario);
  if (name === undefined) noRuleNames.set(scenario, (name = `${scenario}${NO_RULE}`));
  return name;
}

export function createRegistry(options: RegistryOptions): ScenarioRegistry {
  let scenarios = new Map<string, Scenario>();
  let errors: string[] = [];
  let global = options.global;
  /** choiceVersion's count */
  let version = 0;
  const bindings = new Map<string, string>();
  const counters = new NthCounters(NTH_COUNTER_LIMIT);
  const coverage = new Coverage((name) => scenarios.get(name));
  /** the card numbers rules name, worked out at the first question after a load */
  let namedCards: Set<string> | undefined;

  let own = new Map(Object.entries(options.saved ?? {}));
  /** the files and saved scenarios of the last load, which the editor's candidates are resolved beside */
  let loaded: LoadedFile[] = [];

  function load(initial: boolean): string[] {
    const fromFiles = layeredScenarioFiles(options.dir).map(loadFile);
    // a file wins over a scenario saved into the state under its name
    const saved = [...own]
      .filter(([name]) => !fromFiles.some((f) => f.name === name))
      .map(([name, text]) => loadSource(`saved scenario ${name}`, name, text, "yaml"));
    const files = [...fromFiles, ...saved];
    loaded = files;
    const result = resolveAll(files);
    if (initial && result.errors.length) throw new ScenarioError(`scenario files have errors:\n  ${result.errors.join("\n  ")}`);
    // keep the previous good version of a scenario whose file is now broken
    const next = new Map(result.scenarios);
    for (const [name, previous] of scenarios) if (!next.has(name) && files.some((f) => f.name === name)) next.set(name, previous);
    scenarios = next;
    namedCards = undefined;
    errors = result.errors;
    return errors;
  }

  load(true);
  if (!scenarios.has(global)) throw new ScenarioError(`${options.dir}: no scenario "${global}" (have: ${[...scenarios.keys()].join(", ")})`);

  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  if (options.watch) {
    watcher = watch(options.dir, () => {
      clearTimeout(timer);
      timer = setTimeout(() => options.onReload?.(load(false)), 100);
    });
    watcher.unref();
  }

  const need = (name: string) => {
    if (!scenarios.has(name)) throw new GatewayError("unknown_scenario", `"${name}" (have: ${[...scenarios.keys()].join(", ")})`);
  };

  /** X-Sandbox-Outcome: the named outcome, no rule looked at (and none of a rule's latency, faults or fields). */
  function chosenOutcome(input: DecideInput, named: string): Decision {
    checkRequestOutcome(input.operation, named);
    // a decision with no outcome of its own produces nothing yet: a batch's envelope (its orders are
    // decided one by one) or a checkout (the payer's card is, at the hosted checkout)
    if (input.fallback !== "") coverage.chosen(input.merchantId, input.operation, named);
    return { scenario: "", chosenBy: "outcome", rule: outcomeRule(named), outcome: named, then: {} };
  }

  return {
    list: () => [...scenarios.values()],
    get: (name) => scenarios.get(name),
    global: () => global,
    setGlobal(name) {
      need(name);
      global = name;
      version++;
    },
    bindings: () => Object.fromEntries(bindings),
    bind(merchantId, name) {
      need(name);
      bindings.set(merchantId, name);
      version++;
    },
    unbind(merchantId) {
      if (!bindings.delete(merchantId)) return false;
      version++;
      return true;
    },
    errors: () => errors,
    coverage,
    reload: () => load(false),
    decide(input) {
      const header = input.header?.trim();
      if (header) need(header);
      // join makes one flat string; a template literal would keep a chain of pieces per counter in memory
      const key = [input.merchantId, input.operation, input.orderNo ?? ""].join("|");
      // every call counts for "nth", whatever decides it
      const nth = counters.next(key);
      const named = input.outcome?.trim();
      if (named) return chosenOutcome(input, named);
      const bound = bindings.get(input.merchantId);
      const [name, chosenBy] = header
        ? [header, "header" as const]
        : bound && scenarios.has(bound)
          ? [bound, "merchant" as const]
          : [global, "global" as const];
      const scenario = scenarios.get(name)!;
      const { then, matched } = evaluate(scenario.rules, { operation: input.operation, fields: input.fields, nth });
      const outcome = then.outcome ?? input.fallback;
      coverage.decided(input.merchantId, name, matched, input.operation, outcome, then);
      return {
        scenario: name,
        chosenBy,
        rule: matched.length === 1 ? matched[0]! : matched.length ? matched.join(" + ") : noRule(name),
        outcome,
        then,
      };
    },
    namesCard(number) {
      namedCards ??= cardNumbersNamed([...scenarios.values()]);
      return namedCards.has(number);
    },
    sourceOf(name) {
      const f = loaded.find((x) => x.name === name && x.scenario);
      if (!f) return undefined;
      const saved = own.get(name);
      if (saved !== undefined && f.file.startsWith("saved scenario ")) return { text: saved, own: true, shipped: false };
      return { text: readFileSync(f.file, "utf8"), own: false, shipped: resolve(dirname(f.file)) === resolve(defaultScenariosDir) };
    },
    check: (text, sample) => checkCandidate(text, loaded, sample),
    save(text) {
      if (text.length > OWN_TEXT_LIMIT) return { problems: [{ path: "", line: 0, message: `longer than ${OWN_TEXT_LIMIT / 1024} KB` }] };
      const checked = checkCandidate(text, loaded);
      if (!checked.scenario) return { problems: checked.problems };
      const name = checked.scenario.name;
      const existing = loaded.find((f) => f.name === name && !f.file.startsWith("saved scenario "));
      const shipped = existing && resolve(dirname(existing.file)) === resolve(defaultScenariosDir);
      if (shipped || (existing && !options.saveDir))
        return {
          problems: [{ path: "name", line: 0, message: `"${name}" is ${shipped ? "a shipped" : "a file's"} scenario: save a copy under another name` }],
        };
      if (options.saveDir) {
        const file = existing?.file ?? join(options.saveDir, `${name}.yaml`);
        if (extname(file) === ".json" && !isJson(text))
          return { problems: [{ path: "", line: 0, message: `${basename(file)} is JSON: write the scenario as JSON` }] };
        // whole or not at all: a reload never reads half a file
        writeWhole(file, text);
        load(false);
        return { saved: { name, to: "folder", file, replaced: existing !== undefined } };
      }
      const replaced = own.has(name);
      if (!replaced && own.size >= OWN_LIMIT) return { problems: [{ path: "", line: 0, message: `${OWN_LIMIT} scenarios are saved already` }] };
      own = new Map([...own, [name, text]]);
      load(false);
      options.onSaved?.(Object.fromEntries(own));
      return { saved: { name, to: "state", replaced } };
    },
    own: () => Object.fromEntries(own),
    savesTo: () => (options.saveDir ? "folder" : "state"),
    choice: () => ({ global, bindings: Object.fromEntries(bindings), ...(own.size ? { own: Object.fromEntries(own) } : {}) }),
    adopt(choice) {
      // scenarios saved on another replica (or in a state file put back) are in force here too
      const theirs = choice.own ?? {};
      if (JSON.stringify(theirs) !== JSON.stringify(Object.fromEntries(own))) {
        own = new Map(Object.entries(theirs));
        load(false);
        options.onSaved?.(theirs);
      }
      // a replica whose scenario folder lacks the name keeps its own until it has it
      if (scenarios.has(choice.global)) global = choice.global;
      bindings.clear();
      for (const [merchantId, name] of Object.entries(choice.bindings)) bindings.set(merchantId, name);
      version++;
    },
    choiceVersion: () => version,
    takeCounts: () => counters.takeChanged(),
    setCount: (key, n) => counters.set(key, n),
    resetCounters(merchantId) {
      counters.clear(merchantId === undefined ? undefined : `${merchantId}|`);
    },
    close() {
      clearTimeout(timer);
      watcher?.close();
    },
  };
}

// How many times an operation was called for one order (a rule's `nth`), for the most recent
// orders only. Two generations: counts go into the young map; when it is half the limit, it becomes
// the old one and the oldest generation is dropped. A count still in use moves to the young map,
// so what is dropped is what was not used for the longest while, at O(1) per call (a single Map
// re-inserted on every call and trimmed from its front slows down as deletions pile up at its head).
export class NthCounters {
  private young = new Map<string, number>();
  private old = new Map<string, number>();
  /** with a shared store: the counts changed since they were last taken (undefined: not tracked) */
  private changed: Map<string, number> | undefined;
  constructor(private readonly limit: number) {}

  /** counts changed since the last call (tracking starts with the first call) */
  takeChanged(): [string, number][] {
    const out = this.changed ? [...this.changed] : [];
    this.changed = new Map();
    return out;
  }

  /** a count as another replica left it */
  set(key: string, n: number): void {
    this.young.set(key, n);
    this.rotate();
  }

  /** counts one more call for `key` and returns its number (1 for the first) */
  next(key: string): number {
    const n = (this.young.get(key) ?? this.old.get(key) ?? 0) + 1;
    this.young.set(key, n);
    this.changed?.set(key, n);
    this.rotate();
    return n;
  }

  private rotate(): void {
    if (this.young.size >= this.limit / 2) {
      this.old = this.young;
      this.young = new Map();
    }
  }

  get size(): number {
    let n = this.young.size;
    for (const key of this.old.keys()) if (!this.young.has(key)) n++;
    return n;
  }

  /** forgets every count, or those whose key starts with `prefix` */
  clear(prefix?: string): void {
    if (prefix === undefined) {
      this.young.clear();
      this.old.clear();
      return;
    }
    for (const map of [this.young, this.old]) for (const key of map.keys()) if (key.startsWith(prefix)) map.delete(key);
  }
}

// What a scenario's `then` does to the transport of an answer: wait, hang, reset the connection, cut
// the body short, or send nothing. Decided with the answer (the body cut here), done by whoever
// sends it (http/gateway-server.ts waits, hangs or resets).
/** A fault or a 5xx status stands in for the gateway failing: unless `process`, the request has no effect. */
export function skipsProcessing(then: Then): boolean {
  const failing = then.fault !== undefined || (then.status !== undefined && then.status >= 500);
  return failing && then.process !== true;
}

/** Milliseconds to wait: fixed, or within {min, max} picked by `pick` (seeded by the caller). */
export function latencyMs(then: Then, pick: (min: number, max: number) => number): number {
  const l = then.latency;
  if (l === undefined) return 0;
  return typeof l === "number" ? l : pick(l.min, l.max);
}

/** The body a fault leaves: none (empty), the first half (malformed), or all of it. */
export function faultedBody(body: string, fault: Then["fault"]): string {
  if (fault === "empty") return "";
  if (fault === "malformed") return body.slice(0, Math.max(1, Math.floor(body.length / 2)));
  return body;
}

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

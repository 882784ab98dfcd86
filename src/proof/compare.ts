// One recorded answer against Sandgate's answer to the same request: status, content type, then
// the body's tree: fields missing or extra, XML children out of order, each value's shape, and the
// values that must agree (shapes.ts). Pure: both answers and the id map in, differences out.
import { formatOf, readTree, type Tree } from "./documents.js";
import { mustAgree, shapeOf } from "./shapes.js";
import type { Difference } from "../verify-report/verify-report.js";

export type { Difference };

export type Found = Omit<Difference, "exchange" | "operation">;

export interface Answer {
  status: number;
  contentType: string;
  body: string;
  /** the Location of a redirect, "" when none */
  location: string;
}

export interface CompareContext {
  /** a recorded value as Sandgate should say it (the real gateway's ids mapped to Sandgate's) */
  map(value: string): string;
  /** the request's values by field name, any depth: an answer field that repeats one echoes the request */
  echoes: ReadonlyMap<string, ReadonlySet<string>>;
  /** paths to leave out (--ignore) */
  ignored(path: string): boolean;
}

const mediaType = (contentType: string) => contentType.split(";")[0]!.trim().toLowerCase();

export function compareAnswers(recorded: Answer, actual: Answer, ctx: CompareContext): Found[] {
  const out: Found[] = [];
  const add = (d: Found) => {
    if (!ctx.ignored(d.path)) out.push(d);
  };
  if (recorded.status !== actual.status) add({ path: "status", kind: "status", expected: String(recorded.status), actual: String(actual.status) });
  if (mediaType(recorded.contentType) !== mediaType(actual.contentType))
    add({
      path: "content-type",
      kind: "content_type",
      expected: mediaType(recorded.contentType) || "(none)",
      actual: mediaType(actual.contentType) || "(none)",
    });
  // one cause, one line: a body of another status or format is not compared field by field
  if (out.length) return out;
  if (recorded.location || actual.location) compareTree(locationTree(recorded.location), locationTree(actual.location), ["location"], ctx, add);
  const format = formatOf(recorded.contentType, recorded.body);
  if (recorded.body === "" && actual.body === "") return out;
  compareTree(readTree(format, recorded.body), readTree(format, actual.body), [], ctx, add);
  return out;
}

/** A redirect's address as its path and its query's fields (the signed result a payer page returns). */
export function locationTree(location: string): Tree {
  if (!location) return { kind: "object", ordered: false, entries: [] };
  const url = new URL(location, "http://sandgate.invalid");
  const entries: [string, Tree][] = [["url", { kind: "value", value: `${url.origin === "http://sandgate.invalid" ? "" : url.origin}${url.pathname}` }]];
  for (const [k, v] of url.searchParams) entries.push([k, { kind: "value", value: v }]);
  return { kind: "object", ordered: false, entries };
}

const pathText = (path: readonly string[]) => path.reduce((s, p) => (p.startsWith("[") ? `${s}${p}` : s ? `${s}.${p}` : p), "");

function describe(tree: Tree | undefined, field: string): string {
  if (!tree) return "(absent)";
  if (tree.kind === "value") return shapeOf(tree.value, field);
  if (tree.kind === "unreadable") return `not readable as ${tree.format.toUpperCase()}`;
  return tree.kind === "list" ? "list" : "element with children";
}

const shown = (tree: Tree | undefined): string => {
  if (!tree) return "(absent)";
  if (tree.kind === "value") return tree.value === "" ? "(empty)" : typeof tree.value === "string" ? tree.value : JSON.stringify(tree.value);
  if (tree.kind === "unreadable") return `${tree.reason}: ${tree.text.slice(0, 120)}`;
  return tree.kind === "list" ? `a list of ${tree.items.length}` : `{${tree.entries.map(([k]) => k).join(", ")}}`;
};

function compareTree(expected: Tree, actual: Tree, path: string[], ctx: CompareContext, add: (d: Found) => void): void {
  const at = pathText(path);
  const field = path.filter((p) => !p.startsWith("[")).at(-1) ?? "";
  if (ctx.ignored(at)) return;
  if (expected.kind === "unreadable" || actual.kind === "unreadable" || expected.kind !== actual.kind) {
    if (expected.kind === "unreadable" && actual.kind === "unreadable" && expected.text === actual.text) return;
    add({
      path: at || "body",
      kind: "shape",
      expected: describe(expected, field),
      actual: describe(actual, field),
      note: actual.kind === "unreadable" ? actual.reason : undefined,
    });
    return;
  }
  if (expected.kind === "value" && actual.kind === "value") return compareValue(expected.value, actual.value, path, at, field, ctx, add);
  if (expected.kind === "list" && actual.kind === "list") {
    const n = Math.max(expected.items.length, actual.items.length);
    for (let i = 0; i < n; i++) {
      const e = expected.items[i];
      const a = actual.items[i];
      const p = [...path, `[${i}]`];
      if (e && a) compareTree(e, a, p, ctx, add);
      else if (!ctx.ignored(pathText(p))) add({ path: pathText(p), kind: e ? "missing" : "extra", expected: shown(e), actual: shown(a) });
    }
    return;
  }
  if (expected.kind === "object" && actual.kind === "object") compareObjects(expected, actual, path, ctx, add);
}

/** Children by name; a name that occurs more than once on either side is numbered: risk_reasons[0], risk_reasons[1]. */
function keyed(entries: [string, Tree][], repeated: Set<string>): [string, Tree][] {
  const seen = new Map<string, number>();
  return entries.map(([k, v]) => {
    const i = seen.get(k) ?? 0;
    seen.set(k, i + 1);
    return [repeated.has(k) ? `${k}[${i}]` : k, v];
  });
}

function compareObjects(
  expected: Extract<Tree, { kind: "object" }>,
  actual: Extract<Tree, { kind: "object" }>,
  path: string[],
  ctx: CompareContext,
  add: (d: Found) => void,
): void {
  const count = (entries: [string, Tree][]) => entries.reduce((m, [k]) => m.set(k, (m.get(k) ?? 0) + 1), new Map<string, number>());
  const repeated = new Set([...count(expected.entries), ...count(actual.entries)].filter(([, n]) => n > 1).map(([k]) => k));
  const e = keyed(expected.entries, repeated);
  const a = keyed(actual.entries, repeated);
  const inActual = new Map(a);
  const inExpected = new Map(e);
  for (const [k, v] of e) {
    const other = inActual.get(k);
    const p = [...path, k];
    if (other) compareTree(v, other, p, ctx, add);
    else if (!ctx.ignored(pathText(p))) add({ path: pathText(p), kind: "missing", expected: shown(v), actual: "(absent)" });
  }
  for (const [k, v] of a) {
    const p = [...path, k];
    if (!inExpected.has(k) && !ctx.ignored(pathText(p))) add({ path: pathText(p), kind: "extra", expected: "(absent)", actual: shown(v) });
  }
  if (!expected.ordered) return;
  const both = (list: [string, Tree][], other: Map<string, Tree>) => list.map(([k]) => k).filter((k) => other.has(k) && !ctx.ignored(pathText([...path, k])));
  const expectedOrder = both(e, inActual);
  const actualOrder = both(a, inExpected);
  if (expectedOrder.join() !== actualOrder.join())
    add({ path: pathText(path), kind: "order", expected: expectedOrder.join(", "), actual: actualOrder.join(", ") });
}

function compareValue(
  expected: string | number | boolean | null,
  actual: string | number | boolean | null,
  path: string[],
  at: string,
  field: string,
  ctx: CompareContext,
  add: (d: Found) => void,
): void {
  // equal values have equal shapes, and agree
  if (expected === actual) return;
  const es = shapeOf(expected, field);
  const as = shapeOf(actual, field);
  const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  if (es !== as) {
    const raw = typeof expected === "string" ? { expected_value: expected } : {};
    return add({ path: at, kind: "shape", expected: `${es} (${text(expected)})`, actual: `${as} (${text(actual)})`, ...raw });
  }
  const echoed = typeof expected === "string" && ctx.echoes.get(field)?.has(expected);
  const parent = path.length > 1 ? path[path.length - 2]! : "";
  const why =
    (parent && !parent.startsWith("[") ? mustAgree(`${parent}.${field}`) : undefined) ?? mustAgree(field) ?? (echoed ? "it echoes the request" : undefined);
  if (!why) return;
  const wanted = typeof expected === "string" ? ctx.map(expected) : expected;
  if (wanted !== actual) add({ path: at, kind: "value", expected: text(expected), actual: text(actual), note: `must agree: ${why}` });
}

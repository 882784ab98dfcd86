// The house has no import circle: every import of src/ (static, type-only, re-exported and dynamic
// `import()`), read with TypeScript's own preprocessor, makes a graph with no cycle. A circle once
// ran app → admin → proof/verify → proof/target (now replay-target) → sandbox → app (verify now runs in a worker thread,
// its report's types apart), and http/operation ↔ http/refusal through types (now http/reply.ts).
// And every document src/ cites is in the repository (six once cited a PRODUCT.md that is not).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { expect, test } from "vitest";

const SRC = resolve(import.meta.dirname, "..", "src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/** The src/ files a file imports, whatever the kind of import. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((name) => name.startsWith("."))
    .map((name) => resolve(dirname(file), name.replace(/\.js$/, ".ts")));
}

/** The circles of a graph, each as its files in order: a depth-first search, a file met again while on the path closes one. */
function circlesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, "on path" | "done">();
  const circles: string[][] = [];
  const visit = (file: string, path: string[]) => {
    state.set(file, "on path");
    for (const to of graph.get(file) ?? []) {
      if (state.get(to) === "on path") circles.push([...path.slice(path.indexOf(to)), file, to]);
      else if (!state.has(to)) visit(to, [...path, file]);
    }
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file, []);
  return circles;
}

test("no import circle in src/, type-only and dynamic imports included", () => {
  const files = sources(SRC);
  const graph = new Map(files.map((f) => [f, importsOf(f).filter((to) => files.includes(to))]));
  expect(graph.size).toBeGreaterThan(100);
  expect(circlesOf(graph).map((c) => c.map((f) => relative(SRC, f)).join(" → "))).toEqual([]);
});

test("the search finds a circle, however long; the reading sees type-only and dynamic imports", () => {
  expect(circlesOf(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]]))).toEqual([["a", "b", "c", "a"]]);
  expect(circlesOf(new Map([["a", ["b"]], ["b", []]]))).toEqual([]);
  // the imports of the two files that once closed one, read the same way
  const refusal = importsOf(join(SRC, "http", "refusal.ts")).map((f) => relative(SRC, f));
  expect(refusal).toContain("http/reply.ts");
  expect(refusal).not.toContain("http/operation.ts");
  const target = importsOf(join(SRC, "proof", "replay-target.ts")).map((f) => relative(SRC, f));
  expect(target).toContain("sandbox.ts"); // a dynamic import() is read too
});

test("every document src/ cites is in the repository", () => {
  const ROOT = resolve(SRC, "..");
  const missing: string[] = [];
  const placeholders = new Set(["PATH.md"]); // --coverage-report PATH writes PATH.json and PATH.md
  for (const file of sources(SRC)) {
    for (const [doc] of readFileSync(file, "utf8").matchAll(/\b[\w./-]*[A-Za-z]\.md\b/g)) {
      if (placeholders.has(doc)) continue;
      const candidates = [resolve(ROOT, doc), resolve(dirname(file), doc)];
      if (!candidates.some((c) => existsSync(c))) missing.push(`${relative(ROOT, file)}: ${doc}`);
    }
  }
  expect(missing).toEqual([]);
});

test("no two source files share a name: a file is found, and cited, by its name alone", () => {
  const byName = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const name = file.slice(file.lastIndexOf("/") + 1);
    byName.set(name, [...(byName.get(name) ?? []), relative(SRC, file)]);
  }
  expect([...byName.values()].filter((paths) => paths.length > 1)).toEqual([]);
});

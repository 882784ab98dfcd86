// The house's layers (.dependency-cruiser.cjs, checked by dependency-cruiser): no import from a
// lower layer to a higher one and no circle, type-only and dynamic imports included; every source
// file in a layer; and the rule is shown to catch what it forbids. The knots it undid: a runtime
// circle app → admin → proof → sandbox → app (verify now runs in a worker; the server reads only
// verify-report.ts), a type-only one in http/, and one folder-level knot of 13 folders (domain ↔
// store through the record types, notify ↔ deps, config → notify, signature → http, ...).
// And every document src/ cites is in the repository (six once cited a PRODUCT.md that is not).
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { expect, test } from "vitest";

const SRC = resolve(import.meta.dirname, "..", "src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const ROOT = resolve(SRC, "..");
const require = createRequire(import.meta.url);
const DEPCRUISE = join(ROOT, "node_modules", ".bin", "depcruise");
const { layers } = require(join(ROOT, ".dependency-cruiser.cjs")) as { layers: { unit: string; holds: string; path: string }[] };

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

/** dependency-cruiser over `dir`'s src/ with the project's rules: the violations it finds. */
function violationsIn(dir: string): Violation[] {
  const out = execFileSync(DEPCRUISE, ["src", "--config", join(ROOT, ".dependency-cruiser.cjs"), "--output-type", "json"], {
    cwd: dir,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

test("the layering rule holds: no import from a lower layer to a higher one, no circle (type-only and dynamic imports included)", () => {
  expect(violationsIn(ROOT).map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
});

test("every source file is in exactly one layer of .dependency-cruiser.cjs", () => {
  const outside = sources(SRC)
    .map((f) => relative(ROOT, f))
    .filter((f) => layers.filter((l) => new RegExp(l.path).test(f)).length !== 1);
  expect(outside).toEqual([]);
  expect(layers.map((l) => l.unit)).toContain("proof");
});

test("the rule finds an import up the layers, a type-only circle, a dynamic import of proof/ by the server, and files no layer names", () => {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-layers-"));
  try {
    cpSync(SRC, join(dir, "src"), { recursive: true });
    cpSync(join(ROOT, "tsconfig.json"), join(dir, "tsconfig.json"));
    // domain (low) names the Deps type (high): up the layers, and a type-only circle (deps imports domain)
    const money = join(dir, "src", "domain", "clock.ts");
    writeFileSync(money, `import type { Deps } from "../deps/deps.js";\nexport type Handed = Deps;\n${readFileSync(money, "utf8")}`);
    // the dashboard's routes load proof/ at run time
    const admin = join(dir, "src", "admin", "verify-api.ts");
    writeFileSync(admin, `${readFileSync(admin, "utf8")}\nexport const later = () => import("../proof/verify.js");\n`);
    // a loose file at src/'s top, and a folder no layer names, each imported by a card rule
    writeFileSync(join(dir, "src", "helpers.ts"), `export const twice = (n: number): number => 2 * n;\n`);
    mkdirSync(join(dir, "src", "extras"));
    writeFileSync(join(dir, "src", "extras", "more.ts"), `import { twice } from "../helpers.js";\nexport const four = twice(2);\n`);
    const cards = join(dir, "src", "domain", "masking.ts");
    writeFileSync(cards, `${readFileSync(cards, "utf8")}\nexport { four } from "../extras/more.js";\n`);
    const found = violationsIn(dir).map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
    expect(found).toContain("in-a-layer: src/extras/more.ts → src/helpers.ts");
    expect(found).toContain("imports-a-file-in-no-layer: src/domain/masking.ts → src/extras/more.ts");
    expect(found).toContain("layer-domain: src/domain/clock.ts → src/deps/deps.ts");
    expect(found).toContain("layer-admin: src/admin/verify-api.ts → src/proof/verify.ts");
    expect(found.some((f) => f.startsWith("no-circular:"))).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("every document src/ cites is in the repository", () => {
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

test("no state is looked up from the async context: units are handed their records (no AsyncLocalStorage in src/)", () => {
  const found = sources(SRC).filter((f) => /AsyncLocalStorage|async_hooks/.test(readFileSync(f, "utf8")));
  expect(found.map((f) => relative(SRC, f))).toEqual([]);
});

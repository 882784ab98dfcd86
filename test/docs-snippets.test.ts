// Every TypeScript snippet of the README and docs/ type-checks in a strict project of its own, as a
// merchant would paste it (an ES module importing "sandgate", vitest and node's types).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { afterAll, expect, test } from "vitest";
import { docPages, fencedBlocks } from "./docs-helpers.js";

const root = resolve(import.meta.dirname, "..");
// beside node_modules (ignored by git and eslint), so "vitest" and @types/node resolve as in a
// project that installed them
const dir = mkdtempSync(join(root, ".docs-snippets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("every TypeScript snippet of the README and docs/ type-checks in a strict project", () => {
  const snippets = docPages().flatMap((page) => fencedBlocks(page, ["ts", "typescript"]));
  expect(snippets.length).toBeGreaterThanOrEqual(3);
  const where = new Map<string, string>();
  snippets.forEach((s, i) => {
    const file = `snippet-${i}.ts`;
    where.set(file, `${s.page} line ${s.line}`);
    writeFileSync(join(dir, file), s.text);
  });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2023",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ["node"],
        paths: { sandgate: [join(root, "src", "index.ts")] },
      },
      include: ["snippet-*.ts"],
    }),
  );
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  let out = "";
  try {
    execFileSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8" });
  } catch (err) {
    out = String((err as { stdout?: string }).stdout ?? err);
  }
  // errors named by the doc line of the snippet they are in
  const named = out.replace(/snippet-\d+\.ts/g, (file) => where.get(file) ?? file);
  expect(named).toBe("");
}, 60_000);

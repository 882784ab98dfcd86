// docs/architecture.md's path page is the path: the README's first card payment, run under V8's
// precise coverage (scripts/card-payment-path.ts, in its own process, counts reset once Sandgate
// listens), runs code in exactly the files the page's table names, and the table's files exist.
// A change that puts a file on a card payment's path (or takes one off) fails here until the page
// says so, and the page gives the count. The list is kept true, not short: a file does one job, and
// the path has as many files as its jobs.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { expect, test } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const PAGE = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");

/** the table under "A card payment": each step's number and the files its last column names */
function pathTable(): { step: number; files: string[] }[] {
  const section = PAGE.slice(PAGE.indexOf("## A card payment"), PAGE.indexOf("\n## ", PAGE.indexOf("## A card payment") + 1));
  return [...section.matchAll(/^\| (\d+) \|.*\|([^|]*)\|\s*$/gm)].map((m) => ({
    step: Number(m[1]),
    files: [...m[2]!.matchAll(/`(src\/[\w./-]+\.ts)`/g)].map((f) => f[1]!),
  }));
}

/** the src/ files whose code ran on the payment */
function filesThatRun(): string[] {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-path-"));
  try {
    const out = join(dir, "ran.json");
    execFileSync(process.execPath, ["--import", "tsx", join(ROOT, "scripts", "card-payment-path.ts"), "--json", out], { cwd: ROOT, stdio: "inherit" });
    return JSON.parse(readFileSync(out, "utf8")) as string[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the files that run on the README's card payment are exactly the files the path page names", { timeout: 60_000 }, () => {
  const table = pathTable();
  expect(table.map((r) => r.step)).toEqual(Array.from({ length: table.length }, (_, i) => i + 1));
  const named = [...new Set(table.flatMap((r) => r.files))].sort();
  expect(named.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  const ran = filesThatRun();
  // the run is a payment that went through (the probe throws otherwise) in the core and the operation
  expect(ran).toEqual(expect.arrayContaining(["src/http/operation.ts", "src/gateway/authorise.ts"]));
  expect({ ranButNotNamed: ran.filter((f) => !named.includes(f)), namedButDidNotRun: named.filter((f) => !ran.includes(f)) }).toEqual({
    ranButNotNamed: [],
    namedButDidNotRun: [],
  });
  // the page's count (a subfolder counts as a folder)
  const folders = new Set(ran.map((f) => dirname(f)));
  expect(PAGE).toContain(`${ran.length} files in ${folders.size} folders`);
  // notify/ runs only for a payment that names a notify_url
  expect(ran.filter((f) => f.startsWith("src/notify/"))).toEqual([]);
  // payout and subscription code stays off a card payment's path
  expect(ran.filter((f) => /payout|subscription|schedule\//.test(f))).toEqual([]);
});

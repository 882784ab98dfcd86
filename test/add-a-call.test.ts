// Adding an operator call is one entry of the table (a group's file, src/api/calls/*.ts) and its handlers
// (docs/architecture.md). In a copy of the repository a new call, echoWord (POST
// /__sandbox/echo/{word}, with a dashboard form), is added that way and nothing else: the copy's
// own operator-table test then reaches it by every way in (the router, the client, `ctl call`, the
// OpenAPI document, the dashboard's form), and tsc holds the client's answer to the entry's schema.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, expect, test } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const copy = mkdtempSync(join(tmpdir(), "sandgate-add-a-call-"));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

/** Puts `text` into the copy's `file` just before (or after) `anchor`, which must be there once. */
function insert(file: string, anchor: string, text: string, where: "before" | "after" = "before"): void {
  const path = join(copy, file);
  const source = readFileSync(path, "utf8");
  expect(source.split(anchor), `${file}: "${anchor}" once`).toHaveLength(2);
  writeFileSync(path, source.replace(anchor, where === "before" ? `${text}${anchor}` : `${anchor}${text}`));
}

test("a new call is one table entry and its handlers: router, typed client, ctl call, OpenAPI and its form follow", { timeout: 240_000 }, () => {
  for (const part of [
    "src",
    "test",
    "scripts",
    "examples",
    "data",
    "fixtures",
    "scenarios",
    "assets",
    "bin",
    "package.json",
    "tsconfig.json",
    "vitest.config.ts",
    "vitest.packaging.config.ts",
  ])
    cpSync(join(ROOT, part), join(copy, part), { recursive: true, filter: (from) => !from.includes("node_modules") });
  symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"), "dir");

  // the table's entry
  insert(
    "src/api/calls/request-calls.ts",
    "] as const satisfies readonly OperatorCall[];",
    `  {
    method: "post",
    path: "/__sandbox/echo/{word}",
    operationId: "echoWord",
    form: "/__sandbox/ui/echo/{word}",
    scope: "none",
    summary: "says the word back",
    answer: z.strictObject({ echo: s }),
  },
`,
  );
  // its handler, and its form's
  insert("src/server/operator.ts", '  on("getHealth", ', '  on("echoWord", (req, res) => void res.json({ echo: String(req.params.word) }));\n');
  insert(
    "src/dashboard/forms.ts",
    '  onForm("resetState", ',
    '  onForm("echoWord", (req, res) => act(req, res, `${BASE}/`, () => ({ value: pathParam(req, "word") }), (word) => `Echo: ${word}`));\n',
  );
  // a merchant's test using the client: the answer is typed from the entry's schema
  writeFileSync(
    join(copy, "test/echo-typed.ts"),
    `import { createAdminClient } from "../src/api/client.js";
export async function echo(url: string): Promise<string> {
  const answer = await createAdminClient(url).call("echoWord", { params: { word: "hi" } });
  // @ts-expect-error the answer's echo is a string, not a number
  const wrong: number = answer.echo;
  void wrong;
  return answer.echo;
}
`,
  );

  const tsc = spawnSync(join(ROOT, "node_modules/.bin/tsc"), ["--noEmit", "-p", copy], { cwd: copy, encoding: "utf8" });
  expect(tsc.stdout + tsc.stderr, "tsc in the copy").toBe("");
  expect(tsc.status).toBe(0);
  const report = join(copy, "operator-table.json");
  spawnSync(
    join(ROOT, "node_modules/.bin/vitest"),
    ["run", "test/operator-table.test.ts", "--project", "one process", "--reporter", "json", "--outputFile", report],
    { cwd: copy, encoding: "utf8" },
  );
  const results = (
    JSON.parse(readFileSync(report, "utf8")) as { testResults: { assertionResults: { fullName: string; status: string; failureMessages: string[] }[] }[] }
  ).testResults.flatMap((f) => f.assertionResults);
  expect(results.length).toBeGreaterThan(40);
  expect(results.filter((r) => r.status !== "passed").map((r) => `${r.fullName}: ${r.failureMessages.join(" ").slice(0, 400)}`)).toEqual([]);
  // the new call had its own case: the router mounted it and the client reached it
  expect(results.map((r) => r.fullName)).toContainEqual(expect.stringContaining("echoWord: the router mounts it and the client reaches it"));
});

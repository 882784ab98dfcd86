// The record, verify and check-receiver commands as the README and docs/ show them: every flag
// they use is one the command has (its --help, as the process prints it), and `sandgate --help`
// names them.
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { runSandgate } from "../scripts/sandgate-process.js";

const run = async (args: string[]) => (await runSandgate(args)).stdout;

describe.each(["README.md", "docs/proof.md", "docs/notifications.md", "docs/qa-tester.md"])("%s", (file) => {
  const text = readFileSync(new URL(`../${file}`, import.meta.url), "utf8");
  const commands = [...text.matchAll(/sandgate (record|verify|check-receiver)\b([^\n`|]*)/g)].map((m) => ({
    command: m[1]!,
    flags: [...m[2]!.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((f) => f[0]),
  }));

  const shown = [...new Set(commands.map((c) => c.command))];
  test("shows a proof command", () => {
    expect(shown.length).toBeGreaterThan(0);
  });

  test.each(shown)("uses only flags `sandgate %s --help` lists", async (command) => {
    const help = await run([command, "--help"]);
    const used = new Set(commands.filter((c) => c.command === command).flatMap((c) => c.flags));
    for (const flag of used) expect(help, `${file} uses ${flag}`).toMatch(new RegExp(`^\\s+${flag} `, "m"));
  });
});

test("sandgate --help names the record, verify and check-receiver commands", async () => {
  const help = await run(["--help"]);
  expect(help).toMatch(/sandgate check-receiver <url> --merchant <id>/);
  expect(help).toMatch(/sandgate record --upstream <url> --out <file\.har>/);
  expect(help).toMatch(/sandgate verify <file\.har>/);
});

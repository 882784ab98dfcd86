// After every other test file (vitest.config.ts runs this project last): the README's coverage gate
// over the operations this shop uses, run as a CI step runs it, in a process of its own.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, inject, test } from "vitest";

test("the shop's card flows reached at least 80 % of the default scenario's rules for them", async () => {
  const gate = ["ctl", "coverage", "--merchant", "M10001", "--operations", "authorise,capture,refund", "--scenario", "default", "--fail-under", "80"];
  const run = await promisify(execFile)("npx", ["sandgate", ...gate, "--url", inject("sandgateUrl")]).then(
    (done) => ({ code: 0, stdout: done.stdout }),
    (failed: { code: number; stdout: string }) => failed,
  );
  console.log(run.stdout);
  expect([run.code, run.stdout]).toEqual([0, expect.stringContaining("passed: --fail-under 80")]);
}, 60_000);

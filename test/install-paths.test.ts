// docs/merchant-developer.md "Getting the package": Sandgate is on no registry, so a merchant
// installs it from git, from a tarball or from a checkout. Each way, into an empty project: `npx
// sandgate --version` answers and `import { startSandbox } from "sandgate"` serves. From git, npm
// clones the committed tree (no dist/ in it) and the package's prepare script builds it.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const work = mkdtempSync(join(tmpdir(), "sandgate-install-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// vitest puts Vite's BASE_URL in the environment: not the project's
const { BASE_URL: _vite, ...inherited } = process.env;
const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...inherited, npm_config_loglevel: "error", npm_config_fund: "false", npm_config_audit: "false" },
    timeout: 300_000,
  });

/** An empty project that installs Sandgate from `spec`, then runs it both ways. */
function installFrom(name: string, spec: string): { version: string; served: string } {
  const project = join(work, name);
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: `shop-${name}`, private: true, type: "module" }));
  run("npm", ["install", "--save-dev", "--prefer-offline", spec], project);
  const version = run("npx", ["--no-install", "sandgate", "--version"], project).trim();
  const served = run(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `const { startSandbox } = await import("sandgate"); const s = await startSandbox({ port: 0, logLevel: "silent" }); const r = await fetch(s.url + "/__sandbox/health"); console.log(r.status, (await r.json()).status); await s.close();`,
    ],
    project,
  ).trim();
  return { version, served };
}

describe("installing Sandgate into an empty project, the three ways docs/merchant-developer.md gives", () => {
  test("from git (git+file://, the committed tree, dist/ built by prepare)", () => {
    expect(installFrom("git", `git+file://${ROOT}`)).toEqual({ version: VERSION, served: "200 ok" });
  }, 360_000);

  test("from a tarball (npm pack)", () => {
    run("npm", ["pack", "--pack-destination", work], ROOT);
    const tarball = readdirSync(work).find((f) => f.endsWith(".tgz"))!;
    expect(installFrom("tarball", join(work, tarball))).toEqual({ version: VERSION, served: "200 ok" });
  }, 360_000);

  test("from a checkout beside it (a link)", () => {
    expect(installFrom("checkout", ROOT)).toEqual({ version: VERSION, served: "200 ok" });
  }, 360_000);
});

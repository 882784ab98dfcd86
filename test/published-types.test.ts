// What a merchant's TypeScript project sees: the package as npm packs it, installed into a fresh
// project, imported and type-checked with tsc's own defaults (tsc --init) and the .d.ts files checked. Types the .d.ts files
// name (Express's, say) must come with the package, not from one of our devDependencies (TS7016).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { started } from "../scripts/bench/processes.js";

const root = resolve(import.meta.dirname, "..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const work = mkdtempSync(join(tmpdir(), "sandgate-consumer-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_loglevel: "error" } });

const project = join(work, "shop");

describe("the published package in a fresh TypeScript project", () => {
  beforeAll(() => {
    // the tarball npm would publish (prepack builds dist/ first)
    run("npm", ["pack", "--pack-destination", work], root);
    const tarball = readdirSync(work).find((f) => f.endsWith(".tgz"))!;
    run("mkdir", ["-p", project], work);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "shop", private: true, type: "module" }));
    run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", join(work, tarball)], project);
  }, 180_000);

  test("installs from its tarball and type-checks with tsc's defaults", () => {
    run(process.execPath, [tsc, "--init"], project);
    writeFileSync(
      join(project, "index.ts"),
      `import { startSandbox, type SandboxOptions } from "sandgate";\n` +
        `const options: SandboxOptions = { port: 0, seed: "ci", scenario: "declines" };\n` +
        `const sandbox = await startSandbox(options);\n` +
        `const url: string = sandbox.url;\n` +
        `await sandbox.close();\n` +
        `export { url };\n`,
    );
    let output = "";
    try {
      // tsc --init skips checking .d.ts files; a strict project does not, and that is where TS7016 showed
      output = run(process.execPath, [tsc, "--noEmit", "--skipLibCheck", "false", "-p", "."], project);
    } catch (err) {
      output = String((err as { stdout?: string }).stdout ?? err);
    }
    expect(output).toBe("");
  }, 60_000);

  test("`npx sandgate` from it runs the bundled server (dist/sandgate.js), which answers a payment", async () => {
    // the installed bin, run by node as npx would (the bench's starter: the test runner's env does not configure it)
    const sandgate = await started([join(project, "node_modules", ".bin", "sandgate"), "--port", "0", "--host", "127.0.0.1"]);
    const url = sandgate.url;
    try {
      const res = await fetch(`${url}/v1/authorise`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          merchant_id: "M10001",
          account_id: "A10001",
          order_no: "PACKED-1",
          currency: "USD",
          amount: "10.00",
          card: "4242424242424242",
          expiration_month: "12",
          expiration_year: "2030",
          security_code: "123",
          encryption_data: "a".repeat(64),
        }),
      });
      const xml = await res.text();
      expect(res.status).toBe(200);
      expect(xml).toContain("<order_status>1</order_status>");
      // one character beyond ASCII (in a comment) makes V8 keep the 3 MB source two bytes a character
      expect(readFileSync(join(project, "node_modules", "sandgate", "dist", "sandgate.js"), "utf8")).not.toMatch(/[\u0080-\uffff]/);
      // a new merchant's name comes from faker, which the bundle loads from the installed package
      const other = await fetch(`${url}/v1/retrievalTrans`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ merchant_id: "M55555", account_id: "A55555", order_no: "X", encryption_data: "a".repeat(64) }),
      });
      expect(other.status).toBe(200);
    } finally {
      await sandgate.stop();
    }
  }, 30_000);

  test("the tarball has a LICENSE and no source maps pointing at files it does not ship; its prepare script is for git installs and checkouts only", () => {
    const [packed] = JSON.parse(run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], root)) as { files: { path: string }[] }[];
    const files = packed!.files.map((f) => f.path);
    expect(files).toContain("LICENSE");
    expect(files).toContain("dist/main.js");
    expect(files).toContain("dist/sandgate.js");
    expect(files).toContain("dist/index.d.ts");
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
    expect(files.filter((f) => f.startsWith("src/") || f.startsWith("test/"))).toEqual([]);
    // npm runs prepare for a git dependency and in a checkout (it builds dist/ there), never for a
    // tarball: the install above, from a tarball that does not ship the build script, went through
    const manifest = JSON.parse(run("node", ["-p", "JSON.stringify(require('./package.json'))"], root)) as { scripts: Record<string, string> };
    expect(manifest.scripts.prepare).toBe("node scripts/build-if-stale.mjs");
    expect(files).not.toContain("scripts/build-if-stale.mjs");
  });
});

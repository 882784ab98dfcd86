// The README's set-up, `npm start`, on a checkout that has never been built: a copy of this
// repository's sources with its node_modules (the `npm install` half is what .ci/run's `npm ci`
// does on a fresh clone; it is not run here, where it would rewrite the shared node_modules). The
// first start says it is compiling dist/, then serves the bundled fixtures with the default
// scenario; the next start finds dist/ current and says nothing of the kind.
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { freePort } from "../scripts/redis-server.js";
import { fencedBlocks } from "./docs-helpers.js";
import { directPayment, parseXml, textOf } from "./helpers.js";

const ROOT = resolve(import.meta.dirname, "..");
const SOURCES = ["src", "bin", "data", "assets", "fixtures", "scenarios", "package.json", "tsconfig.json", "tsconfig.build.json", "scripts/build-if-stale.mjs"];
let checkout: string;

beforeAll(() => {
  checkout = mkdtempSync(join(tmpdir(), "sandgate-checkout-"));
  for (const path of SOURCES) cpSync(join(ROOT, path), join(checkout, path), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(checkout, "node_modules"), "dir");
});
afterAll(() => rmSync(checkout, { recursive: true, force: true }));

/** This machine's addresses other than loopback (none in some containers). */
const outsideAddresses = () =>
  Object.values(networkInterfaces())
    .flat()
    .filter((a) => a && a.family === "IPv4" && !a.internal)
    .map((a) => a!.address);

/**
 * `npm start` in the checkout until it prints its URL, its port chosen as the README says (PORT, or
 * `npm start -- --port`); then a payment, a try from this machine's other addresses, then SIGTERM.
 */
async function npmStart(portBy: "PORT" | "--port"): Promise<{ stdout: string; stderr: string; url: string; order_status: string; outside: string[] }> {
  const port = await freePort();
  const { BASE_URL: _vite, PORT: _port, HOST: _host, ...env } = process.env;
  const args = portBy === "PORT" ? ["start", "--silent"] : ["start", "--silent", "--", "--port", String(port)];
  const child = spawn("npm", args, { cwd: checkout, env: { ...env, ...(portBy === "PORT" ? { PORT: String(port) } : {}), LOG_LEVEL: "warn" }, detached: true });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((done) => child.on("exit", done));
  try {
    const url = await new Promise<string>((done, fail) => {
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(stdout);
        if (m) done(m[1]!);
      });
      void exited.then((code) => fail(new Error(`npm start exited ${code}: ${stderr}`)));
    });
    const res = await fetch(`${url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(directPayment()) });
    const order_status = textOf(parseXml(await res.text()).order_status);
    // loopback only: from another address of this machine nothing answers
    const outside: string[] = [];
    for (const address of outsideAddresses()) {
      const reached = await fetch(`http://${address}:${port}/__sandbox/health`, { signal: AbortSignal.timeout(2_000) }).then(
        () => true,
        () => false,
      );
      if (reached) outside.push(address);
    }
    process.kill(-child.pid!, "SIGTERM");
    await exited;
    return { stdout, stderr, url, order_status, outside };
  } finally {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // ended
    }
  }
}

test("the README's npm start: an unbuilt checkout compiles dist/ first, then serves the fixtures on loopback at the port chosen (PORT or --port); the next start does not compile", async () => {
  const readme = { path: "README.md", text: readFileSync(join(ROOT, "README.md"), "utf8") };
  const [setUp] = fencedBlocks(readme, ["sh"]);
  expect(setUp!.text).toMatch(/^npm install && npm start\s+# port 8080 on loopback: prints http:\/\/127\.0\.0\.1:8080; bundled fixtures, default scenario/m);
  expect(setUp!.text).toMatch(/^PORT=9000 npm start\s+# another port \(or: npm start -- --port 9000\)/m);

  const first = await npmStart("PORT");
  expect(first.stderr).toMatch(/sandgate: compiling dist\/ \(first start, or the sources changed\)/);
  expect(first.stdout).toMatch(/Sandgate listening on http:\/\/127\.0\.0\.1:\d+ \(scenario default, signatures lenient\)/);
  expect(first.order_status).toBe("1"); // the fixture merchant's payment, approved
  await expect(fetch(`${first.url}/__sandbox/health`)).rejects.toThrow(); // SIGTERM stopped it

  expect(first.outside).toEqual([]);

  const next = await npmStart("--port");
  expect(next.stderr).not.toMatch(/compiling/);
  expect(next.order_status).toBe("1");
  expect(next.outside).toEqual([]);
}, 180_000);

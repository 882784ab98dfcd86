// docs/ci.md's "A runner without Node": the image built from this repository, driven by a shell
// whose PATH has docker, curl and the shell's tools but no node: `docker exec … sandgate ctl`
// waits for it, binds the job's scenario, counts its requests, gates on coverage, and the page's
// one-off `docker run --rm --network host … sandgate ctl health` reaches it too. Runs where a
// Docker engine answers (`docker info`); elsewhere it is skipped, saying why.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { afterAll, describe, expect, test } from "vitest";
import { freePort } from "../scripts/redis-server.js";
import { blockHolding } from "./docs-helpers.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const HAS_DOCKER = spawnSync("docker", ["info"], { stdio: "ignore", timeout: 10_000 }).status === 0;
const HAS_COMPOSE = HAS_DOCKER && spawnSync("docker-compose", ["version"], { stdio: "ignore" }).status === 0;
const IMAGE = `sandgate-doc-test:${process.pid}`;
const CONTAINER = `sandgate-doc-${process.pid}`;
const dir = mkdtempSync(join(tmpdir(), "sandgate-docker-"));
afterAll(() => {
  if (HAS_DOCKER) spawnSync("docker", ["rm", "-f", CONTAINER], { stdio: "ignore" });
  rmSync(dir, { recursive: true, force: true });
});

/** A PATH of the commands the block and the stand-in suite use, node not among them. */
function pathWithoutNode(): string {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  for (const tool of ["docker", "curl", "sh", "sed", "cat", "sleep"]) {
    const where = execFileSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim();
    symlinkSync(where, join(bin, tool));
  }
  return bin;
}

/** The image built from this repository, once for the file's tests. */
let imageBuilt = false;
function buildImage(): void {
  if (imageBuilt) return;
  const built = spawnSync("docker", ["build", "--network", "host", "-t", IMAGE, "."], { cwd: ROOT, encoding: "utf8", timeout: 600_000 });
  expect(built.status, built.stderr).toBe(0);
  imageBuilt = true;
}

describe.skipIf(!HAS_DOCKER)("docs/ci.md: a runner without Node drives the container with docker exec … sandgate ctl (needs a Docker engine)", () => {
  test("built, started, waited for, bound, paid, counted, gated, removed — with no node on PATH", async () => {
    buildImage();
    const port = await freePort();
    const block = blockHolding("docs/ci.md", ["sh"], "docker exec sandgate sandgate ctl health").text;
    const script = block
      .replaceAll("--name sandgate", `--name ${CONTAINER}`)
      .replaceAll("docker exec sandgate ", `docker exec ${CONTAINER} `)
      .replaceAll("docker rm -f sandgate", `docker rm -f ${CONTAINER}`)
      .replaceAll("-p 8080:8080 sandgate", `-p 127.0.0.1:${port}:8080 ${IMAGE}`)
      .replaceAll("http://127.0.0.1:8080", `http://127.0.0.1:${port}`);
    // the page's one-off container beside it, run before the block removes Sandgate's
    const oneOff = /`(docker run --rm --network host sandgate sandgate ctl health\s+--url http:\/\/127\.0\.0\.1:8080)`/
      .exec(readFileSync(join(ROOT, "docs", "ci.md"), "utf8"))![1]!
      .replace(/\s+/g, " ")
      .replace("--network host sandgate ", `--network host ${IMAGE} `)
      .replace("127.0.0.1:8080", `127.0.0.1:${port}`);
    const lines = script.split("\n");
    const rm = lines.findIndex((l) => l.startsWith("docker rm -f"));
    const withOneOff = [...lines.slice(0, rm), oneOff, ...lines.slice(rm)].join("\n");
    // the merchant's suite: one direct payment of CI-JOB-42 over plain HTTP, as any language would
    writeFileSync(
      join(dir, "gradlew"),
      `#!/bin/sh\ncurl -sf "$GATEWAY_URL/v1/authorise" -H 'content-type: application/json' -d '{"merchant_id":"CI-JOB-42","account_id":"ACC-1","order_no":"DOCKER-1","currency":"USD","amount":"10.00","card":"4242424242424242","expiration_month":"12","expiration_year":"2030","security_code":"123","encryption_data":"${"a".repeat(64)}"}' | sed -n 's|.*<order_status>\\([0-9]*\\)</order_status>.*|suite: order_status \\1|p'\n`,
    );
    chmodSync(join(dir, "gradlew"), 0o755);
    const PATH = pathWithoutNode();
    expect(spawnSync("sh", ["-c", "command -v node"], { env: { PATH } }).status, "node is not on the runner's PATH").not.toBe(0);
    const run = spawnSync("sh", ["-e", "-c", withOneOff], { cwd: dir, encoding: "utf8", env: { PATH, HOME: dir }, timeout: 180_000 });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    // declines: the job's merchant was bound to it, and its payment was declined
    expect(run.stdout).toContain("merchant CI-JOB-42 uses scenario declines");
    expect(run.stdout).toContain("suite: order_status 0");
    expect(run.stdout).toMatch(/^1 request \(merchant CI-JOB-42, operation authorise\)$/m);
    // the one-off container reached Sandgate's published port on the host's network
    expect(run.stdout).toContain(`Sandgate at http://127.0.0.1:${port} is up`);
    // `--har -` wrote the job's requests on standard output, redirected into a file
    const har = JSON.parse(readFileSync(join(dir, "requests.har"), "utf8")) as { log: { version: string; entries: { request: { url: string } }[] } };
    expect(har.log.version).toBe("1.2");
    expect(har.log.entries.map((e) => new URL(e.request.url).pathname)).toContain("/v1/authorise");
  }, 900_000);

  test("Docker calls it healthy once it answers: compose's service_healthy has something to wait for", async () => {
    buildImage();
    const port = await freePort();
    const name = `${CONTAINER}-health`;
    const started = Date.now();
    expect(spawnSync("docker", ["run", "-d", "--name", name, "-p", `127.0.0.1:${port}:8080`, IMAGE], { encoding: "utf8" }).status).toBe(0);
    try {
      let answered: number | undefined;
      let healthy: number | undefined;
      while (healthy === undefined && Date.now() - started < 60_000) {
        // docker's proxy takes the connection before the app listens: a try is given up after a while
        answered ??= await fetch(`http://127.0.0.1:${port}/__sandbox/health`, { signal: AbortSignal.timeout(500) }).then(
          (r) => (r.ok ? Date.now() : undefined),
          () => undefined,
        );
        const status = spawnSync("docker", ["inspect", "-f", "{{.State.Health.Status}}", name], { encoding: "utf8" }).stdout.trim();
        if (status === "healthy") healthy = Date.now();
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(answered, "the app answered").toBeDefined();
      expect(healthy, "Docker called it healthy").toBeDefined();
      // how soon after it answers (the check runs every second) is told, not judged: a loaded machine starts containers slowly
      console.log(`container started → answering ${answered! - started} ms → healthy ${healthy! - started} ms`);
    } finally {
      spawnSync("docker", ["rm", "-f", name], { stdio: "ignore" });
    }
  }, 700_000);
});

describe.skipIf(!HAS_COMPOSE)("compose.yaml: Sandgate and the example shop's suite (needs Debian's docker-compose)", () => {
  test("the shop waits for Sandgate to be healthy, and its suite passes inside compose", async () => {
    const project = `sandgate-compose-${process.pid}`;
    const env = { ...process.env, SANDGATE_PORT: String(await freePort()) };
    try {
      // docs/ci.md's line as written, in a compose project of its own and on a free host port
      const [line] = blockHolding("docs/ci.md", ["sh"], "--exit-code-from shop").text.split("\n");
      const [command, ...args] = line!.split(/\s+/);
      expect(command).toBe("docker-compose");
      const up = spawnSync("docker-compose", ["-p", project, ...args], {
        cwd: ROOT,
        env,
        encoding: "utf8",
        timeout: 900_000,
      });
      // the suite's colours (vitest's) out of the way
      const output = stripVTControlCharacters(`${up.stdout}\n${up.stderr}`);
      expect(output).toMatch(/Test Files\s+3 passed/);
      expect(output).toContain("passed: --fail-under 80");
      expect(up.status, output.slice(-4000)).toBe(0);
    } finally {
      spawnSync("docker-compose", ["-p", project, "down", "-v"], { cwd: ROOT, env, stdio: "ignore", timeout: 120_000 });
    }
  }, 1_000_000);
});

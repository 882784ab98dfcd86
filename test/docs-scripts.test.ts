// The shell scripts of docs/ctl.md and docs/ci.md, run as written in a merchant's project (see
// doc-project.ts) with only their port swapped for a free one: `npx sandgate` starts this checkout,
// `sandgate ctl` drives it, and the merchant's own suite (`vendor/bin/phpunit`, `vitest run`) is a
// stand-in that pays over plain HTTP, as any suite in any language would.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { freePort } from "../scripts/redis-server.js";
import { startSandbox } from "../src/server/sandbox.js";
import { blockHolding } from "./docs-helpers.js";
import { docProject, withPorts, type DocProject } from "./doc-project.js";
import { directPayment, parseXml, textOf, type XmlObject } from "./helpers.js";

/** the block of a page that holds this text */
const block = (path: string, holding: string) => blockHolding(path, ["sh", "json"], holding).text;

/** The merchant's suite: one direct payment of $MERCHANT_ID (or CI-JOB-42) to $GATEWAY_URL; prints its order_status. */
const SUITE = `#!/bin/sh
set -eu
curl -sf "$GATEWAY_URL/v1/authorise" -H 'content-type: application/json' -d '{"merchant_id":"'"\${MERCHANT_ID:-CI-JOB-42}"'","account_id":"ACC-1","order_no":"DOC-'"$$"'","currency":"USD","amount":"10.00","card":"4242424242424242","expiration_month":"12","expiration_year":"2030","security_code":"123","encryption_data":"${"a".repeat(64)}"}' | sed -n 's|.*<order_status>\\([0-9]*\\)</order_status>.*|suite: order_status \\1|p'
`;

let project: DocProject;
beforeAll(() => {
  project = docProject();
  project.executable("vendor/bin/phpunit", SUITE);
});
afterAll(() => project.close());

describe("docs/ctl.md", () => {
  test("the CI job in plain shell (sh): waits, binds declines, the suite's payment is declined, the HAR is written, the coverage gate fails the job", async () => {
    const port = await freePort();
    const script = withPorts(block("docs/ctl.md", "#!/bin/sh"), { 8080: port });
    const run = await project.run(script, { shell: "sh", timeoutMs: 90_000 });
    expect(run.stdout, run.stderr).toMatch(/is up/);
    expect(run.stdout).toMatch(/merchant CI-JOB-42 uses scenario declines/);
    expect(run.stdout).toContain("suite: order_status 0");
    const har = JSON.parse(readFileSync(join(project.dir, "reports", "sandgate.har"), "utf8")) as { log: { entries: { request: { url: string } }[] } };
    expect(har.log.entries.some((e) => e.request.url.endsWith("/v1/authorise"))).toBe(true);
    // one declined payment covers little of the scenario: "exit 1 fails the job"
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(/under 60/);
    // the trap stopped Sandgate with the job
    expect(run.leftover).toEqual([]);
  }, 120_000);

  test("a payer's step inside a suite (jq), the clock advanced, notifications delivered", async () => {
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", watchScenarios: false });
    try {
      const res = await fetch(`${sandbox.url}/v1/authorise`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(directPayment({ order_no: "DOC-3DS", card: "4000002760003184" })),
      });
      const challenged = parseXml(await res.text());
      expect(textOf(challenged.order_status)).toBe("-1");
      const script = `${block("docs/ctl.md", "threeds_passed --json | jq")}\necho "status=$status"`;
      const run = await project.run(script, { env: { SANDGATE_URL: sandbox.url, TRANSACTION_ID: textOf(challenged.transaction_id) } });
      expect(run.stderr).toBe("");
      expect(run).toMatchObject({ code: 0 });
      expect(run.stdout).toMatch(/^status=1$/m);
      expect(run.stdout).toMatch(/clock/i);
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  test("telling a failed gate (exit 1) from a sandbox that is down (any other code)", async () => {
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", watchScenarios: false });
    const script = block("docs/ctl.md", "case $? in");
    try {
      const low = await project.run(script, { env: { SANDGATE_URL: sandbox.url, MERCHANT: "CI-JOB-42" } });
      expect(low).toMatchObject({ code: 1 });
      expect(low.stdout).toMatch(/^coverage under 60%$/m);
    } finally {
      await sandbox.close();
    }
    const down = await project.run(script, { env: { SANDGATE_URL: `http://127.0.0.1:${await freePort()}`, MERCHANT: "CI-JOB-42" } });
    expect(down).toMatchObject({ code: 1 });
    expect(down.stdout).toMatch(/^cannot ask Sandgate$/m);
  }, 60_000);
});

describe("docs/ci.md", () => {
  test("the CI job in any language: Sandgate in the background, health, scenario, the suite, the coverage gate", async () => {
    const port = await freePort();
    const script = withPorts(block("docs/ci.md", "vendor/bin/phpunit"), { 8080: port });
    const run = await project.run(script, { timeoutMs: 90_000 });
    expect(run.stdout, run.stderr).toMatch(/is up/);
    expect(run.stdout).toMatch(/merchant CI-JOB-42 uses scenario declines/);
    expect(run.stdout).toContain("suite: order_status 0");
    expect(run.stdout).toMatch(/Coverage of merchant CI-JOB-42/);
    expect(run.code).toBe(1); // one payment covers under 80 %: the gate fails the job
  }, 120_000);

  test("the npm scripts: test:payments starts Sandgate, waits for it, runs the suite, stops it, and exits with the suite's code", async () => {
    const scripts = JSON.parse(`{${block("docs/ci.md", '"test:payments"')}}`) as { scripts: Record<string, string> };
    const port = await freePort();
    const pkg = JSON.parse(readFileSync(join(project.dir, "package.json"), "utf8")) as object;
    // the suite in place of vitest (a merchant's vitest suite is the merchant's)
    const stand = (text: string) => withPorts(text, { 9000: port }).replace("vitest run", "vendor/bin/phpunit");
    project.file("package.json", JSON.stringify({ ...pkg, scripts: Object.fromEntries(Object.entries(scripts.scripts).map(([k, v]) => [k, stand(v)])) }));
    const run = await project.run("npm run --silent test:payments", { timeoutMs: 90_000 });
    expect(run.stdout, run.stderr).toContain("suite: order_status 1");
    expect(run.code).toBe(0);
    expect(run.leftover).toEqual([]); // `kill $!` stopped it
    project.executable("vendor/bin/phpunit", "#!/bin/sh\nexit 3\n");
    expect((await project.run("npm run --silent test:payments", { timeoutMs: 90_000 })).code).toBe(3);
    project.executable("vendor/bin/phpunit", SUITE);
  }, 120_000);
});

describe("docs/operations.md, payer pages in CI without a browser", () => {
  test("each curl line ends its payment as its comment says", async () => {
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", watchScenarios: false });
    try {
      const lines = block("docs/operations.md", "-d outcome=paid")
        .split("\n")
        .filter((l) => l && !l.startsWith("#"));
      expect(lines).toHaveLength(3);
      const authorise = async (body: Record<string, unknown>) => {
        const res = await fetch(`${sandbox.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        return parseXml(await res.text());
      };
      const env = (payment: XmlObject) => ({ URL: sandbox.url, ISSUER_URL: textOf(payment.issuer_url), TRANSACTION_ID: textOf(payment.transaction_id) });
      // an APM payment's page: 303 to its return_url, paid
      const apm = await authorise({
        merchant_id: "M10001",
        account_id: "A10002",
        order_no: "DOC-APM",
        currency: "BRL",
        amount: "25.00",
        payment_method: "pix",
        return_url: "https://shop.example/back",
        encryption_data: "a".repeat(64),
      });
      expect(textOf(apm.issuer_url)).toMatch(/\/pay\/apm\//);
      const paid = await project.run(lines[0]!, { env: env(apm) });
      expect(paid.stdout).toMatch(/^HTTP\/1\.1 303/);
      expect(paid.stdout).toMatch(/^location: https:\/\/shop\.example\/back\?.*order_status=1/im);
      // a 3-D Secure challenge passed with 1234: JSON
      const challenged = await authorise(directPayment({ card: "4000002760003184" }));
      const passed = JSON.parse((await project.run(lines[1]!, { env: env(challenged) })).stdout) as Record<string, string>;
      expect(passed).toMatchObject({ transaction_id: textOf(challenged.transaction_id), order_status: "1" });
      // the operator API: another challenge failed, with payment_status and stage
      const other = await authorise(directPayment({ card: "4000002760003184" }));
      const failed = JSON.parse((await project.run(lines[2]!, { env: env(other) })).stdout) as Record<string, string>;
      expect(failed).toMatchObject({ transaction_id: textOf(other.transaction_id), order_status: "0" });
      expect(failed).toHaveProperty("payment_status");
      expect(failed).toHaveProperty("stage");
    } finally {
      await sandbox.close();
    }
  }, 60_000);
});

test("`sandgate ctl --help | head -1`: a reader that stops early ends the command quietly, without a stack trace", async () => {
  const run = await project.run("set -o pipefail; npx sandgate ctl --help | head -1; npx sandgate --help | head -1");
  expect(run).toMatchObject({ code: 0, stderr: "" });
  expect(run.stdout).toBe("Usage: sandgate ctl [options] [command]\nUsage: sandgate [options]\n");
});

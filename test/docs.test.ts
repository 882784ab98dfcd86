// The README and docs/ stay true: the README is short, its first payment runs as written against a
// listening Sandgate and its answer is signed as it says, every link reaches a page and heading,
// the signature tables are the data's, and the settings page lists every setting.
import { execFile } from "node:child_process";
import { createServer, type IncomingHttpHeaders } from "node:http";
import { promisify } from "node:util";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { OPTIONS } from "../src/config/config.js";
import { TABS } from "../src/dashboard/frame.js";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { ROOT, anchors, blockHolding, docPages, fencedBlocks, prose } from "./docs-helpers.js";
import { parseXml, textOf } from "./helpers.js";

const pages = docPages();
const page = (path: string) => pages.find((p) => p.path === path)!;
const readme = page("README.md");

test("the README is short: at most 250 lines", () => {
  expect(readme.text.split("\n").length).toBeLessThanOrEqual(250);
});

test("every relative link of the README and docs/ reaches a file, and a heading of it when it names one", () => {
  const broken: string[] = [];
  for (const { path, text } of pages) {
    for (const [, link] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?|mailto):/.test(link!)) continue;
      const [file, anchor] = link!.split("#");
      const target = file ? normalize(join(dirname(path), file)) : path;
      if (!existsSync(join(ROOT, target))) broken.push(`${path}: ${link} (no file)`);
      else if (anchor && target.endsWith(".md") && !anchors(readFileSync(join(ROOT, target), "utf8")).has(anchor)) broken.push(`${path}: ${link} (no heading)`);
    }
  }
  expect(broken).toEqual([]);
});

test("the signature page's table is data/signature-fields.json, every operation with its request and answer fields", () => {
  const data = JSON.parse(readFileSync(join(ROOT, "data", "signature-fields.json"), "utf8")) as Record<
    string,
    { request: string[]; response: string[] } | string
  >;
  const list = (fields: string[]) => (fields.length ? fields.map((f) => `\`${f}\``).join(", ") : "—");
  const rows = Object.entries(data)
    .filter(([name]) => name !== "$comment")
    .map(([name, v]) => typeof v === "object" && `| \`${name}\` | ${list(v.request)} | ${list(v.response)} |`);
  const table = /<!-- signature-fields[^>]*-->\n\|[^\n]*\n\|[^\n]*\n([\s\S]*?)\n<!-- \/signature-fields -->/.exec(page("docs/signatures.md").text)?.[1];
  expect(table?.split("\n")).toEqual(rows);
});

test("the settings page lists every setting: its flag and its environment variable", () => {
  const text = page("docs/settings.md").text;
  for (const o of OPTIONS) expect(text, o.flag).toContain(`| \`${o.flag}\` | \`${o.env}\` |`);
});

test("the QA tester's guide lists the dashboard's tabs in the order the page shows them", () => {
  const listed = [...page("docs/qa-tester.md").text.matchAll(/^\| ([A-Z][\w ]*?) \| /gm)].map((m) => m[1]).filter((name) => name !== "Tab");
  expect(listed).toEqual(TABS.map(([name, , label]) => label ?? name[0]!.toUpperCase() + name.slice(1)));
});

describe("the README's first payment, run by bash and curl against a listening Sandgate", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", signatureMode: "strict", watchScenarios: false });
  });
  afterAll(() => sandbox.close());

  // bash and curl as processes of their own (a synchronous call would block this process's server)
  test("is approved with a signature strict mode accepts, and its answer is signed as the README says", async () => {
    const [script] = fencedBlocks(readme, ["sh"]).filter((b) => b.text.includes("/v1/authorise"));
    expect(script).toBeDefined();
    const run = script!.text.replace(/URL=http:\/\/127\.0\.0\.1:8080/, `URL=${sandbox.url}`);
    const xml = parseXml((await promisify(execFile)("bash", ["-euo", "pipefail", "-c", run], { encoding: "utf8", timeout: 10_000 })).stdout);
    expect(textOf(xml.order_status)).toBe("1");
    expect(textOf(xml.result_info)).toBe("0000:Success");
    // "the SHA-256 of merchant_id, account_id, order_no, currency, amount, transaction_id, order_status, result_info and the key"
    const said = /its own `encryption_data`: the SHA-256 of ([^.]*?) and the key/.exec(readme.text.replace(/\n/g, " "))?.[1];
    const fields = [...said!.matchAll(/`(\w+)`/g)].map((m) => m[1]!);
    expect(fields).toEqual(["merchant_id", "account_id", "order_no", "currency", "amount", "transaction_id", "order_status", "result_info"]);
    const signing = fields.map((f) => textOf(xml[f])).join("") + "acme_test_key_7f3a9c21";
    expect(textOf(xml.encryption_data)).toBe(createHash("sha256").update(signing).digest("hex"));
  });

  test("the signature page's example signs a transaction query that strict mode accepts", async () => {
    const [script] = fencedBlocks(page("docs/signatures.md"), ["sh"]);
    const signature = (await promisify(execFile)("bash", ["-euo", "pipefail", "-c", script!.text], { encoding: "utf8", timeout: 10_000 })).stdout.trim();
    const res = await fetch(`${sandbox.url}/v1/retrievalTrans`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ merchant_id: "M10001", account_id: "A10001", encryption_data: signature }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { return_status: string }).return_status).toBe("1");
  });
});

/**
 * Where each code block of the README and docs/ is run, or checked where it cannot run here (a
 * Docker registry, a GitHub Actions runner, the real gateway): the test file, found by a text the
 * block holds. A new block fails the test below until a test runs it and is named here.
 */
const RUN_BY: [page: string, holding: string, test: string][] = [
  ["README.md", "npm install && npm start", "npm-start.test.ts"],
  ["README.md", "/v1/authorise", "docs.test.ts"],
  ["docs/benchmark.md", "npm run bench", "docs-reference.test.ts"],
  ["docs/state.md", '{"sandgate_state":1', "state-export.test.ts"],
  ["docs/ci.md", "vendor/bin/phpunit", "docs-scripts.test.ts"],
  ["docs/ci.md", '"test:payments"', "docs-scripts.test.ts"],
  ["docs/ci.md", "services:\n  sandgate:", "docs-reference.test.ts"],
  ["docs/ci.md", "runs-on: ubuntu-latest", "docs-reference.test.ts"],
  ["docs/ctl.md", "sandgate ctl <command>", "ctl.test.ts"],
  ["docs/ctl.md", "#!/bin/sh", "docs-scripts.test.ts"],
  ["docs/ctl.md", "threeds_passed --json | jq", "docs-scripts.test.ts"],
  ["docs/ctl.md", "case $? in", "docs-scripts.test.ts"],
  ["docs/layout.md", "src/main.ts", "docs-reference.test.ts"],
  ["docs/merchant-developer.md", "import { startSandbox }", "docs-snippets.test.ts"],
  ["docs/merchant-developer.md", "test/global-setup.ts", "docs-snippets.test.ts"],
  ["docs/notifications.md", "POST <notify_url>", "docs.test.ts"],
  ["docs/notifications.md", "npx sandgate check-receiver", "docs-reference.test.ts"],
  ["docs/notifications.md", "npx sandgate listen --url", "listen.test.ts"],
  ["docs/openapi.md", "GET /__sandbox/openapi.json", "openapi-tools.test.ts"],
  ["docs/openapi.md", "curl -s http://127.0.0.1:8080/__sandbox/openapi.json", "openapi-tools.test.ts"],
  ["docs/openapi.md", "openapi-typescript openapi.json", "openapi-tools.test.ts"],
  ["docs/openapi.md", 'import createClient from "openapi-fetch"', "openapi-tools.test.ts"],
  ["docs/openapi.md", "tsc --project", "openapi-tools.test.ts"],
  ["docs/operations.md", "$URL/v1/", "readme-examples.test.ts"],
  ["docs/operations.md", "SIG=$(printf", "readme-examples.test.ts"],
  ["docs/operations.md", "-d outcome=paid", "docs-scripts.test.ts"],
  ["docs/operator-api.md", "createAdminClient", "docs-snippets.test.ts"],
  ["docs/proof.md", "sandgate record", "proof-docs.test.ts"],
  ["docs/replicas.md", "--port 8081 &", "docs-replicas.test.ts"],
  ["docs/replicas.md", "docker-compose -f examples/replicas", "docs.test.ts"],
  ["docs/ci.md", "docker exec sandgate sandgate ctl health", "docker.test.ts"],
  ["docs/ci.md", "--exit-code-from shop", "docker.test.ts"],
  ["docs/replicas.md", "for port in 7000 7001 7002", "docs-replicas.test.ts"],
  ["docs/scenarios.md", "X-Sandbox-Outcome: insufficient_funds", "outcome-header.test.ts"],
  ["docs/scenarios.md", "yaml-language-server", "readme-scenario.test.ts"],
  ["docs/scenarios.md", "/__sandbox/coverage?merchant_id=CI-JOB-42", "docs-reference.test.ts"],
  ["docs/scenarios.md", '"merchant_id": "CI-JOB-42"', "docs-reference.test.ts"],
  ["docs/scenarios.md", "--operations used", "coverage-scope.test.ts"],
  ["docs/signatures.md", "sha256sum", "docs.test.ts"],
  ["docs/signatures.md", "import hashlib", "merchant-examples.test.ts"],
  ["docs/signatures.md", "hash('sha256'", "merchant-examples.test.ts"],
];

test("every code block of the README and docs/ is run or checked by a named test that reads its page", () => {
  const unclaimed: string[] = [];
  const used = new Set<number>();
  for (const p of pages) {
    for (const b of fencedBlocks(p, ["", "sh", "bash", "ts", "typescript", "js", "json", "yaml", "yml", "python", "php"])) {
      const claims = RUN_BY.flatMap((entry, i) => (entry[0] === p.path && b.text.includes(entry[1]) ? [i] : []));
      if (claims.length === 0) unclaimed.push(`${p.path} line ${b.line}: ${b.text.split("\n")[0]}`);
      claims.forEach((i) => used.add(i));
    }
  }
  expect(unclaimed).toEqual([]);
  expect(RUN_BY.filter((_, i) => !used.has(i)).map(([page, holding]) => `${page}: ${holding}`)).toEqual([]);
  // the test named reads that page (by its path, or with every page)
  for (const [page, , file] of RUN_BY) {
    const where = join(ROOT, "test", file);
    expect(existsSync(where), file).toBe(true);
    const text = readFileSync(where, "utf8");
    const everyPage = /docPages\(\)|readdirSync\(new URL\("docs\/"/.test(text);
    expect(text.includes(page) || everyPage || (page === "README.md" && text.includes("readme")), `${file} reads ${page}`).toBe(true);
  }
});

test("the examples/replicas compose commands of docs/replicas.md name a compose file and a service that exist", () => {
  const compose = blockHolding("docs/replicas.md", ["sh"], "docker-compose -f examples/replicas");
  const files = new Set([...compose.text.matchAll(/-f (\S+)/g)].map((m) => m[1]!));
  expect([...files]).toEqual(["examples/replicas/docker-compose.yml"]);
  const yaml = readFileSync(join(ROOT, [...files][0]!), "utf8");
  for (const [, service] of compose.text.matchAll(/ stop (\S+)/g)) expect(yaml).toMatch(new RegExp(`^  ${service}:`, "m"));
  // `curl -s localhost:8080/__sandbox/health`: nginx publishes 8080
  expect(compose.text).toContain("localhost:8080/__sandbox/health");
  expect(yaml).toMatch(/"8080:/);
});

test("the notification docs/notifications.md shows is what a receiver gets: its headers and its fields", async () => {
  const [shown] = fencedBlocks(page("docs/notifications.md"), [""]).filter((b) => b.text.startsWith("POST <notify_url>"));
  const [head, body] = shown!.text.split("\n\n");
  const shownHeaders = head!
    .split("\n")
    .slice(1)
    .map((l) => l.slice(0, l.indexOf(":")).toLowerCase());
  const shownFields = [...body!.matchAll(/"(\w+)":/g)].map((m) => m[1]!).filter((f, i, all) => all.indexOf(f) === i);
  let received: { headers: IncomingHttpHeaders; body: string } | undefined;
  const receiver = createServer((req, res) => {
    let text = "";
    req.on("data", (d: Buffer) => (text += d.toString()));
    req.on("end", () => {
      received = { headers: req.headers, body: text };
      res.end("ok");
    });
  });
  await new Promise<void>((ready) => receiver.listen(0, "127.0.0.1", ready));
  const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", watchScenarios: false });
  try {
    const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/notify`;
    const res = await fetch(`${sandbox.url}/__sandbox/notifications/trigger`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ merchant_id: "M10001", url, event: "payment.captured" }),
    });
    expect(res.status).toBe(201);
    expect(received).toBeDefined();
    const sent = Object.keys(received!.headers).filter((h) => h.startsWith("x-sandbox-") || h === "content-type");
    expect(sent.sort()).toEqual([...shownHeaders].sort());
    expect(received!.headers["content-type"]).toMatch(/^application\/json/);
    expect(Object.keys(JSON.parse(received!.body) as object)).toEqual(shownFields);
  } finally {
    await sandbox.close();
    receiver.close();
  }
});

test("every `npm run <script>` the README and docs/ name is a script of package.json", () => {
  const scripts = Object.keys((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts);
  const named = new Set(pages.flatMap((p) => [...p.text.matchAll(/npm run ([a-z][\w:-]*[a-z])/g)].map((m) => m[1]!)));
  expect(named).toContain("test:fast");
  expect([...named].filter((s) => !scripts.includes(s))).toEqual([]);
});

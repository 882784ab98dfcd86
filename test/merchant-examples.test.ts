// examples/python-merchant and examples/php-merchant: a Python shop's pytest suite (Debian's
// python3-pytest, python3-requests) and a PHP shop's PHPUnit suite (php-cli, php-curl, phpunit)
// against Sandgate started as their READMEs say (npx sandgate, strict signatures), each driving
// scenarios, outcomes and the clock over plain HTTP. Then once more through a proxy that breaks
// every gateway answer's signature: the shop must notice, and its suite fail. docs/signatures.md's
// Python and PHP snippets run too.
import { spawn, spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createHash } from "node:crypto";
import { ensureBuilt, spawnSandgate, type SandgateProcess } from "../scripts/sandgate-process.js";
import { blockHolding } from "./docs-helpers.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const HAS_PYTEST = spawnSync("python3", ["-c", "import pytest, requests"], { stdio: "ignore" }).status === 0;
const HAS_PHPUNIT = spawnSync("sh", ["-c", "command -v phpunit && php -r 'exit(function_exists(\"curl_init\") ? 0 : 1);'"], { stdio: "ignore" }).status === 0;

/** Each example: its suite's command (run from its folder), how its output counts what passed, its signing snippet's language. */
const EXAMPLES = [
  {
    name: "python-merchant",
    has: HAS_PYTEST,
    needs: "python3-pytest, python3-requests",
    command: ["python3", "-m", "pytest", "-q"],
    passed: /\b11 passed\b/,
    failed: /\b\d+ failed\b/,
    snippet: ["python", "import hashlib", "python3", "-c"],
  },
  {
    name: "php-merchant",
    has: HAS_PHPUNIT,
    needs: "php-cli, php-curl, phpunit",
    command: ["phpunit"],
    passed: /\bOK \(11 tests\b/,
    failed: /\bFAILURES!|\bERRORS!/,
    snippet: ["php", "hash('sha256'", "php", "-r"],
  },
] as const;

/** The suite's exit code and output, against the Sandgate at `url`. */
function suite(example: (typeof EXAMPLES)[number], url: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const [command, ...args] = example.command;
    const child = spawn(command, args, { cwd: `${ROOT}examples/${example.name}`, env: { ...process.env, SANDGATE_URL: url } });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** A proxy to `target` that changes one character of encryption_data in every /v1/ answer (XML or JSON). */
function breakingProxy(target: string): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !["host", "content-length", "connection"].includes(k))) as Record<
          string,
          string
        >;
        const body = chunks.length ? Buffer.concat(chunks) : undefined;
        const answer = await fetch(`${target}${req.url}`, { method: req.method, headers, body, redirect: "manual" });
        let text = await answer.text();
        if (req.url?.startsWith("/v1/"))
          text = text.replace(/(encryption_data(?:>|":"))([0-9a-f])/, (_, head: string, c: string) => `${head}${c === "0" ? "1" : "0"}`);
        const out: Record<string, string> = {};
        answer.headers.forEach((v, k) => {
          if (!["content-length", "content-encoding", "transfer-encoding", "connection"].includes(k)) out[k] = v;
        });
        res.writeHead(answer.status, out).end(text);
      })();
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe.each(EXAMPLES)("examples/$name: its suite against npx sandgate", (example) => {
  let sandgate: SandgateProcess;
  let url: string;
  beforeAll(async () => {
    if (!example.has) return;
    ensureBuilt();
    sandgate = spawnSandgate(["--port", "0", "--host", "127.0.0.1", "--signature-mode", "strict"], { built: true });
    url = await sandgate.url;
  });
  afterAll(async () => {
    sandgate?.child.kill("SIGTERM");
    await sandgate?.exited;
  });

  test.skipIf(!example.has)(
    `passes (needs ${example.needs}): card, 3-D Secure, hosted checkout, partial capture and refund, query, refund search, payout, notifications, scenarios, outcomes, clock`,
    async () => {
      const run = await suite(example, url);
      expect(run.output).toMatch(example.passed);
      expect(run.code, run.output).toBe(0);
    },
    120_000,
  );

  test.skipIf(!example.has)("docs/signatures.md's snippet in its language prints the retrievalTrans signature the page names", () => {
    const [lang, holding, command, flag] = example.snippet;
    const text = blockHolding("docs/signatures.md", [lang], holding).text.replace(/^<\?php\s*/, "");
    const run = spawnSync(command, [flag, text], { encoding: "utf8" });
    expect(run.stdout.trim()).toBe(createHash("sha256").update("M10001A10001acme_test_key_7f3a9c21").digest("hex"));
  });

  test.skipIf(!example.has)(
    "fails when Sandgate's answers are not signed with the merchant's key (a planted fault: a proxy breaks them)",
    async () => {
      const proxy = await breakingProxy(url);
      try {
        const run = await suite(example, `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
        expect(run.code).not.toBe(0);
        expect(run.output).toContain("is not signed with our key");
        expect(run.output).toMatch(example.failed);
      } finally {
        proxy.close();
      }
    },
    120_000,
  );
});

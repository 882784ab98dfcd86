// The OpenAPI document as the ecosystem's tools take it, served by a real running Sandgate (with
// ADMIN_TOKEN, so the client's token is real) and written to a temporary folder:
// - `redocly lint` with the recommended ruleset finds no error in it (and only the warnings named below);
// - openapi-typescript generates types from it, a small strict TypeScript program uses them with
//   openapi-fetch (tsc --strict passes; a wrong path, field type, query parameter or body fails), and
//   the program's calls against the running Sandgate answer what it expects.
// The commands are those of docs/openapi.md. Redocly's usage data and update check are off.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { directPayment } from "./helpers.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TOKEN = "openapi-client-token";
/** no usage data, no update check: the only address the tools reach is the Sandgate below */
const ENV = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" };

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
/** A tool of this project's node_modules (`npx --no --`: never downloads; `--`: its options are the tool's), without blocking the server running in this process. */
function npx(args: string[], cwd = ROOT): Promise<Run> {
  return new Promise((resolve) => {
    execFile("npx", ["--no", "--", ...args], { cwd, env: ENV, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

let sandbox: Sandbox;
let dir: string;
let documentFile: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", watchScenarios: false, adminToken: TOKEN, notifyAllow: "127.0.0.1" });
  dir = mkdtempSync(join(tmpdir(), "sandgate-openapi-"));
  documentFile = join(dir, "openapi.json");
  const res = await fetch(`${sandbox.url}/__sandbox/openapi.json`);
  expect(res.status).toBe(200);
  writeFileSync(documentFile, await res.text());
});

afterAll(async () => {
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the served OpenAPI document and the ecosystem's tools", () => {
  test("redocly lint (recommended ruleset): no error; the only warnings are the two calls that have no 4xx answer", async () => {
    const { code, stdout, stderr } = await npx(["redocly", "lint", "--extends=recommended", "--format=json", documentFile]);
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(report.totals.errors, problems.join("\n")).toBe(0);
    expect(code, stderr).toBe(0);
    // health and this document answer 200 whatever is sent (no token needed, nothing to refuse)
    expect(problems.sort()).toEqual([
      "warn operation-4xx-response #/paths/~1__sandbox~1health/get/responses: Operation must have at least one `4XX` response.",
      "warn operation-4xx-response #/paths/~1__sandbox~1openapi.json/get/responses: Operation must have at least one `4XX` response.",
    ]);
  });

  test("a client generated with openapi-typescript: a strict program type-checks, wrong uses do not, and its calls get the answers it expects", async () => {
    const generated = await npx(["openapi-typescript", documentFile, "--output", join(dir, "sandgate.ts")]);
    expect(generated.code, generated.stderr).toBe(0);
    expect(readFileSync(join(dir, "sandgate.ts"), "utf8")).toContain('"/__sandbox/transactions"');

    // the program's folder resolves openapi-fetch, tsx and @types/node from this project
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
    const compilerOptions = {
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      types: ["node"],
      noEmit: true,
      skipLibCheck: true,
    };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["client.ts", "wrong.ts"] }, null, 2));
    const payment = directPayment();
    writeFileSync(join(dir, "client.ts"), clientProgram(payment));
    writeFileSync(join(dir, "wrong.ts"), WRONG);

    // tsc --strict: the program compiles, and every line marked `// wrong` of wrong.ts is an error (and nothing else is)
    const tsc = await npx(["tsc", "--project", join(dir, "tsconfig.json")]);
    const errors = [...tsc.stdout.matchAll(/^(?:\S*\/)?([^/(]+)\((\d+),\d+\): error TS\d+/gm)].map((m) => `${m[1]}:${m[2]}`);
    const marked = WRONG.split("\n").flatMap((line, i) => (line.includes("// wrong") ? [`wrong.ts:${i + 1}`] : []));
    expect(marked).toHaveLength(5);
    expect([...new Set(errors)].sort(), tsc.stdout).toEqual(marked.sort());

    // the program against the running Sandgate (tsx runs it as written)
    const run = await npx(["tsx", join(dir, "client.ts"), sandbox.url, TOKEN], dir);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const seen = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(seen).toMatchObject({
      health: { status: "ok", signature_mode: "lenient" },
      payment: { status: 200, type: "application/xml", order_no: payment.order_no },
      transaction: { order_no: payment.order_no, merchant_id: "M10001", amount: "10.00", currency: "USD", kind: "direct" },
      binding: { merchant_id: "M10001", scenario: "happy-path" },
      missing: { status: 404, error: "unknown_scenario" },
      unauthorised: { status: 401, error: "unauthorised" },
    });
    expect(seen.scenarios).toEqual(expect.arrayContaining(["default", "declines", "happy-path"]));
    // and the sandbox saw those calls: the payment is there, the binding holds
    const stored = sandbox.deps.store.data.transactions.find((t) => t.order_no === payment.order_no);
    expect(stored?.transaction_id).toBe((seen.transaction as { transaction_id: string }).transaction_id);
    expect(sandbox.deps.scenarios.bindings()).toMatchObject({ M10001: "happy-path" });
  });
});

/** A merchant's test script: typed calls to the gateway (this payment) and the operator API of a Sandgate. */
const clientProgram = (payment: Record<string, unknown>) => `import createClient from "openapi-fetch";
import type { paths } from "./sandgate.js";

const [baseUrl = "", token = ""] = process.argv.slice(2);
const sandgate = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });

const health = await sandgate.GET("/__sandbox/health");
if (!health.data) throw new Error(\`health: \${health.response.status}\`);
const status: "ok" = health.data.status;
const mode: "lenient" | "strict" = health.data.signature_mode;

// a payment through the gateway (lenient signatures): the body is typed, the answer is XML
const body = ${JSON.stringify(payment, null, 2)};
const orderNo = body.order_no;
const payment = await sandgate.POST("/v1/authorise", { body, parseAs: "text" });

const transactions = await sandgate.GET("/__sandbox/transactions", { params: { query: { merchant_id: "M10001", order_no: orderNo } } });
if (!transactions.data) throw new Error(\`transactions: \${transactions.response.status}\`);
const found = transactions.data.transactions[0];
if (!found) throw new Error("the payment is not listed");
const amount: string = found.amount;
const kind: "direct" | "apm" | "checkout" | "recurring" = found.kind;

const list = await sandgate.GET("/__sandbox/scenarios");
if (!list.data) throw new Error(\`scenarios: \${list.response.status}\`);
const names: string[] = list.data.scenarios.map((s) => s.name);
const rules: number = list.data.scenarios.reduce((n, s) => n + s.rules, 0);

const bound = await sandgate.PUT("/__sandbox/scenarios/bindings/{merchantId}", { params: { path: { merchantId: "M10001" } }, body: { name: "happy-path" } });

const missing = await sandgate.GET("/__sandbox/scenarios/{name}", { params: { path: { name: "no-such-scenario" } } });
const missingError: string | undefined = missing.error?.error;

const anonymous = createClient<paths>({ baseUrl });
const refused = await anonymous.GET("/__sandbox/transactions");

console.log(JSON.stringify({
  health: { status, signature_mode: mode },
  payment: { status: payment.response.status, type: payment.response.headers.get("content-type")?.split(";")[0], order_no: orderNo },
  transaction: { transaction_id: found.transaction_id, order_no: found.order_no, merchant_id: found.merchant_id, amount, currency: found.currency, kind },
  scenarios: names,
  rules,
  binding: bound.data,
  missing: { status: missing.response.status, error: missingError },
  unauthorised: { status: refused.response.status, error: refused.error?.error },
}));
`;

/** Uses the generated types get wrong: each line marked // wrong must be a tsc error. */
const WRONG = `import createClient from "openapi-fetch";
import type { paths } from "./sandgate.js";

const sandgate = createClient<paths>({ baseUrl: "http://127.0.0.1:1" });

export async function wrong(): Promise<void> {
  await sandgate.GET("/__sandbox/transaction"); // wrong: no such path
  const health = await sandgate.GET("/__sandbox/health");
  const time: number | undefined = health.data?.time; // wrong: time is a string
  await sandgate.GET("/__sandbox/transactions", { params: { query: { merchant: "M10001" } } }); // wrong: no such query parameter
  await sandgate.PUT("/__sandbox/scenarios/global", { body: { scenario: "declines" } }); // wrong: the body is { name }
  await sandgate.POST("/v1/authorise", { body: { merchant_id: "M10001" } }); // wrong: the payment's required fields are missing
  void time;
}
`;

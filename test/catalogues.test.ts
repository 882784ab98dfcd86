// One declaration per surface (docs/architecture.md): a gateway path is written only in the
// operations' catalogue, and what reads paths (the routes, replay, verify, the recorder, the scenario
// schema) follows a row of it; an operator path is written only in the operator-call table (the
// prefix in base/paths.ts). `npm run lint` refuses a path literal anywhere else in src/.
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { GATEWAY_OPERATION_NAMES, GATEWAY_OPERATIONS, operationAt } from "../src/domain/gateway-operations.js";
import { signatureFields } from "../src/domain/signature.js";
import { GATEWAY_HANDLERS } from "../src/server/app.js";
import { RULE_OPERATIONS } from "../src/scenarios/schema.js";
import { callPath, formPath, OPERATOR_CALLS } from "../src/api/operator-calls.js";
import { SANDBOX_PATH } from "../src/base/paths.js";

const ROOT = resolve(import.meta.dirname, "..");

/** eslint's messages for `text` as if it were the file `path` (nothing is written). */
function lint(path: string, text: string): string[] {
  let out: string;
  try {
    out = execFileSync(resolve(ROOT, "node_modules/.bin/eslint"), ["--format", "json", "--stdin", "--stdin-filename", path], {
      cwd: ROOT,
      input: text,
      encoding: "utf8",
    });
  } catch (err) {
    out = (err as { stdout: string }).stdout;
  }
  return (JSON.parse(out) as { messages: { message: string }[] }[]).flatMap((f) => f.messages.map((m) => m.message));
}

describe("the gateway's operations, once", () => {
  test("every row has its handler, its signed fields and its scenario name; a path finds its row as the server routes it", () => {
    expect(GATEWAY_HANDLERS.map((h) => h.name)).toEqual(GATEWAY_OPERATION_NAMES);
    for (const handler of GATEWAY_HANDLERS) {
      expect(handler.path).toBe(GATEWAY_OPERATIONS[handler.name].path);
      expect(handler.format).toBe(GATEWAY_OPERATIONS[handler.name].format);
      expect(signatureFields[handler.name].request.length).toBeGreaterThan(0);
      expect(RULE_OPERATIONS).toContain(handler.name);
      expect(operationAt(handler.path.toUpperCase() + "/")).toBe(handler.name);
    }
    expect(operationAt("/v1/nothing")).toBeUndefined();
  });

  test("lint refuses a gateway path written outside the catalogue, in a string or a template", { timeout: 60_000 }, () => {
    const elsewhere = lint("src/proof/new-file.ts", 'export const a = "/v1/authorise";\nexport const b = (u: string) => `/v1/capture?x=${u}`;\n');
    expect(elsewhere.filter((m) => m.includes("gateway-operations.ts"))).toHaveLength(2);
    expect(lint("src/domain/gateway-operations.ts", 'export const a = "/v1/authorise";\n').filter((m) => m.includes("gateway-operations.ts"))).toEqual([]);
    // prose that names a path is no declaration of one
    expect(lint("src/proof/new-file.ts", 'export const a = "send it to /v1/authorise";\n')).toEqual([]);
  });
});

describe("the operator calls' paths, once", () => {
  test("every call and form lives under the one prefix; callPath and formPath put parameters in, encoded", () => {
    for (const call of OPERATOR_CALLS) {
      expect(call.path.startsWith(`${SANDBOX_PATH}/`)).toBe(true);
      if (call.form) expect(call.form.startsWith(`${SANDBOX_PATH}/ui/`)).toBe(true);
    }
    expect(callPath("getNotification", { id: "n 1/2" })).toBe(`${SANDBOX_PATH}/notifications/n%201%2F2`);
    expect(formPath("completePayout", { transaction_id: "T1" })).toBe(`${SANDBOX_PATH}/ui/payouts/T1/complete`);
  });

  test("lint refuses an operator path written outside the table and the prefix's file", { timeout: 60_000 }, () => {
    const text = 'export const a = "/__sandbox/health";\nexport const b = (id: string) => `/__sandbox/notifications/${id}`;\nexport const c = "/__sandbox";\n';
    const refusals = (path: string) => lint(path, text).filter((m) => m.includes("operator-call table"));
    expect(refusals("src/dashboard/new-tab.ts")).toHaveLength(3);
    expect(refusals("src/api/calls/record-calls.ts")).toEqual([]);
    // the table's composition writes no path: a call is declared in its group's file
    expect(refusals("src/api/operator-calls.ts")).toHaveLength(3);
    expect(refusals("src/base/paths.ts")).toEqual([]);
    // the gateway's catalogue may not write an operator path either
    expect(refusals("src/domain/gateway-operations.ts")).toHaveLength(3);
  });
});

// The operator API is one table (src/api/operator-calls.ts): the router, the OpenAPI document, the
// typed client and `ctl call` are made from it. Each call of the table is reached through each of
// them here, against a real listening Sandgate; a call with no handler stops the server's making.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { OPERATOR_CALLS } from "../src/api/operator-calls.js";
import { callHandlers } from "../src/admin/call-handlers.js";
import { SandgateAdminError, startSandbox, type Sandbox } from "../src/index.js";
import { runSandgate } from "../scripts/sandgate-process.js";
import request from "supertest";
import { formSession, makeApp } from "./helpers.js";

/** A value for each path parameter: no record has it, so a call that names one answers its own 404. */
const PARAMS: Record<string, string> = {
  ref: "R-none",
  transaction_id: "T-none",
  recurring_id: "S-none",
  id: "N-none",
  merchant_id: "TABLE-M1",
  merchantId: "TABLE-M1",
  name: "default",
};
/** a parameter no call above names yet (a call just added): a value of its own */
const paramOf = (name: string) => PARAMS[name] ?? `${name}-none`;
const paramsOf = (path: string) => Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1]!, paramOf(m[1]!)]));

/** The router's own answer to a path it does not have: what no call of the table may get. */
const NO_ROUTE = /no operator route/;

describe("every call of the table, by every way in", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", seed: "table", logLevel: "silent" });
  });
  afterAll(() => sandbox?.close());

  test.each(OPERATOR_CALLS.map((c) => [c.operationId, c] as const))("%s: the router mounts it and the client reaches it", async (id, call) => {
    const url = `${sandbox.url}${call.path.replace(/\{(\w+)\}/g, (_, n: string) => paramOf(n))}`;
    const res = await fetch(url, {
      method: call.method.toUpperCase(),
      ...(call.method === "get" || call.method === "delete" ? {} : { headers: { "content-type": "application/json" }, body: "{}" }),
    });
    const text = await res.text();
    expect(text, `${call.method} ${call.path}`).not.toMatch(NO_ROUTE);
    expect(res.status, `${call.method} ${call.path}: ${text.slice(0, 200)}`).not.toBe(405);
    // the client: the same call by its operationId answers, or throws the API's own error (never a 404 for the route)
    try {
      await sandbox.admin.call(id, { params: paramsOf(call.path), ...(call.method === "get" || call.method === "delete" ? {} : { body: {} }) });
    } catch (err) {
      expect(err, id).toBeInstanceOf(SandgateAdminError);
      expect((err as SandgateAdminError).message, id).not.toMatch(NO_ROUTE);
      expect((err as SandgateAdminError).error, id).not.toBe("not_json");
    }
  });

  test("the OpenAPI document has each call at its method and path, with its operationId", async () => {
    const doc = (await (await fetch(`${sandbox.url}/__sandbox/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
    for (const call of OPERATOR_CALLS) expect(doc.paths[call.path]?.[call.method]?.operationId, `${call.method} ${call.path}`).toBe(call.operationId);
  });

  test("sandgate ctl call: its help lists each call; a call by operationId answers its JSON; a missing path parameter is said", async () => {
    const help = await runSandgate(["ctl", "call", "--help"]);
    for (const call of OPERATOR_CALLS) expect(help.stdout, call.operationId).toContain(call.operationId);
    const env = { SANDGATE_URL: sandbox.url, ADMIN_TOKEN: "" };
    const got = await runSandgate(["ctl", "call", "provisionMerchant", "merchant_id=CTL-TABLE"], { env });
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ merchant: { merchant_id: "CTL-TABLE" }, created: true });
    const listed = await runSandgate(["ctl", "call", "listTransactions", "merchant_id=CTL-TABLE"], { env });
    expect(JSON.parse(listed.stdout)).toEqual({ transactions: [] });
    const missing = await runSandgate(["ctl", "call", "completePayment"], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("needs transaction_id=<value>");
    // sandgate listen's calls are signed with a merchant's key: ctl says what to run instead of sending a request refused 401
    const listen = await runSandgate(["ctl", "call", "listenNotifications"], { env });
    expect(listen.code).toBe(2);
    expect(listen.stderr).toContain("listenNotifications is sandgate listen's, signed with a merchant's key rather than ADMIN_TOKEN: sandgate listen --url");
  });
});

test("each call's dashboard form (its /ui/ twin in the table) is mounted: a post from the dashboard is answered with a page or a redirect", async () => {
  const { app } = await makeApp();
  const { cookie, token } = await formSession(app);
  const twins = OPERATOR_CALLS.filter((c) => c.form);
  expect(twins.map((c) => c.operationId)).toEqual(expect.arrayContaining(["completePayment", "settleRefund", "advanceClock", "resetState"]));
  for (const call of twins) {
    const path = call.form!.replace(/\{(\w+)\}/g, (_, n: string) => paramOf(n));
    const res = await request(app).post(path).set("cookie", cookie).type("form").send({ _form: token });
    expect(res.text, `${call.operationId}: POST ${path}`).not.toMatch(NO_ROUTE);
    expect([200, 303], `${call.operationId}: POST ${path} → ${res.status}`).toContain(res.status);
  }
});

test("a call of the table with no handler is named when the router is made", () => {
  const { on, handlersOf } = callHandlers();
  on("getHealth", (_req, res) => res.end());
  expect(handlersOf("getHealth")).toHaveLength(1);
  expect(() => handlersOf("getClock")).toThrow(/getClock .* has no handler/);
  expect(() => on("getHealth", (_req, res) => res.end())).toThrow(/two handlers/);
});

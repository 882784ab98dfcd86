// GET /__sandbox/openapi.json: OpenAPI 3.1 generated from the zod schemas the server validates with.
// Real answers of every operation — the examples of docs/operations.md run top to bottom, a 3-D Secure
// challenge, and a refusal of each — are validated against the document with ajv (JSON Schema 2020-12).
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import request from "supertest";
import { describe, expect, test } from "vitest";
import { convert } from "xmlbuilder2";
import { GATEWAY_HANDLERS } from "../src/server/app.js";
import { directPayment, makeApp } from "./helpers.js";
import { readmeExamples } from "./readme-helpers.js";

type Doc = {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { requestBody?: { content: Record<string, { schema: object }> }; responses: Record<string, { content: Record<string, { schema: object }> }> }
    >
  >;
};

/** An XML answer as the document describes it: <respon>'s children by name, empty ones as "". */
function xmlAnswer(xml: string): unknown {
  const empty = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(empty)
      : v && typeof v === "object"
        ? Object.keys(v).length === 0
          ? ""
          : Object.fromEntries(Object.entries(v).map(([k, c]) => [k, empty(c)]))
        : v;
  return empty((convert(xml, { format: "object" }) as { respon: unknown }).respon);
}

async function documentAndValidator() {
  const { app } = await makeApp();
  const res = await request(app).get("/__sandbox/openapi.json");
  expect(res.status).toBe(200);
  const doc = res.body as Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  /** Checks an answer against the document's schema for its path, status and media type. */
  const check = (path: string, status: number, type: string, text: string, where: string) => {
    const media = type.split(";")[0]!;
    const schema = doc.paths[path]?.post?.responses[String(status)]?.content[media]?.schema;
    expect(schema, `${where}: no schema for ${path} ${status} ${media}`).toBeDefined();
    const value = media === "application/xml" ? xmlAnswer(text) : media === "application/json" ? JSON.parse(text) : text;
    const valid = ajv.validate(schema!, value);
    expect(valid, `${where}: ${path} ${status} ${ajv.errorsText(ajv.errors)}\n${text.slice(0, 400)}`).toBe(true);
  };
  return { app, doc, check };
}

describe("GET /__sandbox/openapi.json", () => {
  test("is OpenAPI 3.1 with every /v1 operation (JSON and form bodies) and the operator API", async () => {
    const { doc } = await documentAndValidator();
    expect(doc.openapi).toBe("3.1.0");
    for (const op of GATEWAY_HANDLERS) {
      const post = doc.paths[op.path]?.post;
      expect(post, op.path).toBeDefined();
      expect(Object.keys(post!.requestBody!.content)).toEqual(["application/json", "application/x-www-form-urlencoded"]);
      expect(Object.keys(post!.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "403", "404", "413", "500", "503"]));
    }
    // a field's type and what is required come from the zod schema the server validates with
    const payout = doc.paths["/v1/payout"]!.post!.requestBody!.content["application/json"]!.schema as {
      required: string[];
      properties: Record<string, unknown>;
    };
    expect(payout.required).toEqual(expect.arrayContaining(["merchant_id", "account_id", "request_id", "payment_currency", "payment_method"]));
    expect(Object.keys(payout.properties)).toEqual(expect.arrayContaining(["beneficiary", "payer", "payment_amount", "source_amount", "swift_charge_option"]));
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/__sandbox/health", "/__sandbox/requests.har", "/__sandbox/coverage", "/__sandbox/payments/{transaction_id}/complete"]),
    );
  });

  test("real answers of every operation validate against it: the examples of docs/operations.md, a 3-D Secure challenge, and each operation's refusal", async () => {
    const { app, check } = await documentAndValidator();
    const covered = new Set<string>();
    for (const e of readmeExamples(readFileSync(new URL("../docs/operations.md", import.meta.url), "utf8"))) {
      const res = await request(app)
        .post(e.path)
        .set("content-type", e.json ? "application/json" : "application/x-www-form-urlencoded")
        .send(e.body);
      check(e.path, res.status, res.type, res.text, `docs/operations.md line ${e.line}`);
      covered.add(e.path);
    }
    expect([...covered].sort()).toEqual(GATEWAY_HANDLERS.map((op) => op.path).sort());
    const challenge = await request(app)
      .post("/v1/authorise")
      .send(directPayment({ card: "4000002760003184" }));
    expect(challenge.text).toContain("<issuer_url>");
    check("/v1/authorise", challenge.status, challenge.type, challenge.text, "3-D Secure challenge");
    // and the schemas are not vacuous: an answer missing a child, or a refusal, does not pass as an approval
    const approved = await request(app).post("/v1/authorise").send(directPayment());
    expect(() => check("/v1/authorise", 200, "application/xml", approved.text.replace(/<transaction_id>\d+<\/transaction_id>\n/, ""), "tampered")).toThrow(
      /transaction_id/,
    );
    const refusedCapture = (await request(app).post("/v1/capture").send({ merchant_id: "M10001", account_id: "A10001" })).text;
    expect(() =>
      check("/v1/capture", 200, "application/json", refusedCapture.replace('"capture_orders":[]', '"capture_orders":[{"capture_status":1}]'), "tampered"),
    ).toThrow();
    for (const op of GATEWAY_HANDLERS) {
      const refused = await request(app).post(op.path).send({ merchant_id: "M10001", account_id: "A10001" });
      expect(refused.status, op.path).toBe(400);
      check(op.path, refused.status, refused.type, refused.text, "refusal");
    }
  });

  test("the operator API's bodies come from the schemas its calls read them with: what they accept validates, what they refuse does not", async () => {
    const { app, doc } = await documentAndValidator();
    const ajv = new Ajv2020({ strict: false });
    const bodySchema = (method: string, path: string) =>
      (doc.paths[path] as Record<string, { requestBody?: { content: Record<string, { schema: object }> } }>)[method]?.requestBody?.content["application/json"]
        ?.schema;
    const cases: [string, string, object, object][] = [
      ["put", "/__sandbox/scenarios/global", { name: "declines" }, { name: 5 }],
      ["post", "/__sandbox/clock", { advance: "3d" }, { advance: ["3d"] }],
      ["post", "/__sandbox/reset", { merchant_id: "M10002" }, { merchant_id: 7 }],
      ["post", "/__sandbox/refunds/{ref}/settle", { result: "failed" }, { result: "lost" }],
      ["post", "/__sandbox/payouts/{transaction_id}/fail", { failure_type: "NO_ACCOUNT" }, { failure_reason: 42 }],
      ["post", "/__sandbox/notifications/trigger", { merchant_id: "M10001", url: "http://127.0.0.1:9/hook" }, { merchant_id: "M10001", url: "ftp://x" }],
    ];
    for (const [method, path, good, bad] of cases) {
      const schema = bodySchema(method, path);
      expect(schema, `${method} ${path}`).toBeDefined();
      expect(ajv.validate(schema!, good), `${path} ${JSON.stringify(good)}`).toBe(true);
      expect(ajv.validate(schema!, bad), `${path} ${JSON.stringify(bad)}`).toBe(false);
    }
    // and the API itself refuses the same bad bodies
    expect((await request(app).put("/__sandbox/scenarios/global").send({ name: 5 })).body.error).toBe("invalid_name");
    expect(
      (
        await request(app)
          .post("/__sandbox/clock")
          .send({ advance: ["3d"] })
      ).body.error,
    ).toBe("invalid_advance");
    expect((await request(app).post("/__sandbox/reset").send({ merchant_id: 7 })).body.error).toBe("invalid_reset");
    expect((await request(app).post("/__sandbox/clock").send({ advance: "3d" })).status).toBe(200);
  });
});

import express from "express";
import request from "supertest";
import { describe, expect, test } from "vitest";
import { ACME, childNames, directPayment, makeApp, parseXml } from "./helpers.js";
import { routePath, runOperation, type GatewayInput } from "../src/http/operation.js";
import { authorise } from "../src/gateway/authorise.js";
import { GatewayError } from "../src/domain/codes.js";

describe("helpers", () => {
  test("a direct payment answers XML in the interface document's element order", async () => {
    const { app } = await makeApp();
    const res = await request(app).post("/v1/authorise").send(directPayment());
    expect(res.status).toBe(200);
    expect(res.type).toBe("application/xml");
    expect(parseXml(res.text).merchant_id).toBe(ACME.merchant_id);
    expect(childNames(res.text).slice(0, 9)).toEqual([
      "merchant_id",
      "account_id",
      "order_no",
      "amount",
      "currency",
      "transaction_id",
      "card",
      "order_status",
      "result_info",
    ]);
  });
});

describe("operation paths", () => {
  test("match as Express routes do: any case, one trailing slash; other methods and paths are not operations", async () => {
    const { app } = await makeApp();
    for (const path of ["/V1/Authorise", "/v1/authorise/", "/v1/authorise?debug=1"]) {
      const res = await request(app).post(path).send(directPayment());
      expect(res.status, path).toBe(200);
      expect(parseXml(res.text).order_status, path).toBe("1");
    }
    for (const [method, path] of [
      ["get", "/v1/authorise"],
      ["post", "/v1/authorise//"],
      ["post", "/v1/authorisex"],
      ["put", "/v1/capture"],
    ] as const) {
      const res = await request(app)[method](path).send({});
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.return_message, `${method} ${path}`).toMatch(/^I0404:No such operation/);
    }
  });

  test("a request target in absolute form (as sent through a proxy) names the same operation", () => {
    expect(routePath("http://127.0.0.1:3000/V1/Capture/?x=1")).toBe("/v1/capture");
    expect(routePath("/v1/capture?x=/y")).toBe("/v1/capture");
    expect(routePath("http://[not a url")).toBe("");
  });
});

describe("the gateway's core on plain data (no socket, no Express)", () => {
  const input = (body: Uint8Array | GatewayError, headers: Record<string, string> = {}): GatewayInput => ({
    url: "/v1/authorise",
    headers: { host: "sandbox.test", "content-type": "application/json", ...headers },
    rawHeaders: [],
    body,
    clientAddress: "10.1.2.3",
  });

  test("runOperation(authorise, input) answers, stores and logs as the HTTP server does", async () => {
    const { deps } = await makeApp();
    const answer = await runOperation(authorise, input(Buffer.from(JSON.stringify(directPayment({ order_no: "CORE-1" })))), deps);
    expect(answer.status).toBe(200);
    expect(answer.headers["Content-Type"]).toBe("application/xml; charset=utf-8");
    expect(parseXml(answer.body).order_status).toBe("1");
    expect(deps.store.data.transactions.some((t) => t.order_no === "CORE-1")).toBe(true);
    const [logged] = deps.requests.list({ order_no: "CORE-1", limit: 1 });
    expect(logged).toMatchObject({ id: answer.headers["X-Request-Id"], ip: "10.1.2.3", http_status: 200 });
  });

  test("a body the adapter could not read, and a scenario's fault, are data in the answer", async () => {
    const { deps } = await makeApp();
    const tooLarge = await runOperation(authorise, input(new GatewayError("body_too_large", "the limit is 1kb")), deps);
    expect(tooLarge.status).toBe(413);
    expect(parseXml(tooLarge.body).result_info).toMatch(/the limit is 1kb/);
    const hang = await runOperation(
      authorise,
      input(Buffer.from(JSON.stringify(directPayment({ order_no: "CORE-2" }))), { "x-sandbox-scenario": "slow-and-flaky" }),
      deps,
    );
    expect(hang.fault).toBe("hang");
    expect(deps.store.data.transactions.some((t) => t.order_no === "CORE-2")).toBe(false);
  });
});

describe("createApp in a server of the merchant's own", () => {
  test("mounted in an Express app: its own routes first, then Sandgate's operations and operator API", async () => {
    const { app } = await makeApp();
    const outer = express();
    outer.get("/mine", (_req, res) => res.send("mine"));
    outer.use(app);
    expect((await request(outer).get("/mine")).text).toBe("mine");
    const paid = await request(outer).post("/v1/authorise").send(directPayment());
    expect(parseXml(paid.text).order_status).toBe("1");
    expect((await request(outer).get("/__sandbox/health")).status).toBe(200);
  });
});

test("a browser's own /favicon.ico request (opening a JSON or XML answer) gets 204, not a 404 in its console", async () => {
  const { app } = await makeApp();
  const res = await request(app).get("/favicon.ico");
  expect(res.status).toBe(204);
  expect(res.text).toBe("");
});

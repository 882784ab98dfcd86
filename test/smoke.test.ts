import express from "express";
import request from "supertest";
import { describe, expect, test } from "vitest";
import { ACME, childNames, directPayment, makeApp, parseXml } from "./helpers.js";
import { routePath } from "../src/http/operation.js";

describe("helpers", () => {
  test("a direct payment answers XML in the seed's element order", async () => {
    const { app } = await makeApp();
    const res = await request(app).post("/v1/authorise").send(directPayment());
    expect(res.status).toBe(200);
    expect(res.type).toBe("application/xml");
    expect(parseXml(res.text).merchant_id).toBe(ACME.merchant_id);
    expect(childNames(res.text).slice(0, 9)).toEqual(["merchant_id", "account_id", "order_no", "amount", "currency", "transaction_id", "card", "order_status", "result_info"]);
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
    for (const [method, path] of [["get", "/v1/authorise"], ["post", "/v1/authorise//"], ["post", "/v1/authorisex"], ["put", "/v1/capture"]] as const) {
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

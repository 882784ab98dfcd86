import request from "supertest";
import { describe, expect, test } from "vitest";
import { ACME, childNames, directPayment, makeApp, parseXml } from "./helpers.js";

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

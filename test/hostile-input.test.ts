// Inputs meant to break things: each gets a clear refusal in the operation's format and the
// server keeps serving. (Found by review; each case once crashed, hung or corrupted state.)
import request from "supertest";
import { describe, expect, test } from "vitest";
import { ACME, ANY_SIGNATURE, directPayment, makeApp, parseXml } from "./helpers.js";
import { ENVELOPE, one, pay, paymentIn } from "./lifecycle-helpers.js";

describe("bodies", () => {
  test("JSON nested 100 000 levels deep is refused with I0003, not a stack overflow", async () => {
    const { app } = await makeApp();
    const deep = `{"merchant_id":"M10001","account_id":"A10001","x":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    for (const path of ["/v1/capture", "/v1/authorise", "/v1/payout"]) {
      const res = await request(app).post(path).set("content-type", "application/json").send(deep);
      expect(res.status, path).toBe(400);
      expect(res.text, path).toMatch(/I0003:Malformed request body: the JSON body is nested deeper than 32 levels/);
    }
    expect((await request(app).get("/__sandbox/health")).status).toBe(200);
  });

  test("the depth limit is exact: 33 levels are refused, 32 are read", async () => {
    const { app } = await makeApp();
    // the body object is the first level; `x` nests the rest
    const nested = (levels: number) => JSON.stringify(directPayment({ x: JSON.parse(`${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}`) }));
    const deeper = await request(app).post("/v1/authorise").set("content-type", "application/json").send(nested(33));
    expect(deeper.text).toMatch(/I0003:Malformed request body: the JSON body is nested deeper than 32 levels/);
    const limit = await request(app).post("/v1/authorise").set("content-type", "application/json").send(nested(32));
    expect(limit.text).not.toMatch(/nested deeper/);
  });

  test.each([
    ["U+FFFF", "Y\uffff"],
    ["a lone surrogate", "Y\ud800"],
  ])("%s in a field is refused: XML could not carry it", async (_name, orderNo) => {
    const { app } = await makeApp();
    const res = await request(app)
      .post("/v1/authorise")
      .send(directPayment({ order_no: orderNo }));
    expect(res.status).toBe(400);
    expect(res.text).toContain("<field>order_no</field>");
  });

  test("a form with more parameters than are read is refused, not cut short", async () => {
    const { app } = await makeApp();
    const form = `merchant_id=M10001&account_id=A10001&encryption_data=${ANY_SIGNATURE}&` + Array.from({ length: 5001 }, (_, i) => `p${i}=x`).join("&");
    const res = await request(app).post("/v1/retrievalTrans").type("form").send(form);
    expect(res.status).toBe(400);
    expect(res.body.return_message).toMatch(/^I0003:.*at most 5000/);
  });

  test("paying with token_id and card at once is refused, naming token_id", async () => {
    const { app } = await makeApp();
    const res = await request(app)
      .post("/v1/authorise")
      .send(directPayment({ token_id: "tok_acme_visa_4242", card: "4000000000000002" }));
    expect(res.status).toBe(400);
    expect(res.text).toContain("<field>token_id</field>");
  });
});

describe("lifecycle bounds", () => {
  test("a capture of 0.00 is refused and the payment stays authorised", async () => {
    const { app } = await makeApp();
    const p = await pay(app);
    const r = await one(app, "capture", { ...p, amount: "0.00" });
    expect(r.capture_status).toBe("0");
    expect(r.error_message).toMatch(/^E0005:.*greater than 0\.00/);
    expect((await one(app, "cancel", p)).cancel_status).toBe("1");
  });

  test("the 100th refund of a payment is refused: references stay <transaction_id>-<two digits>", async () => {
    const { app } = await makeApp();
    const p = await paymentIn(app, "paid"); // 100.00
    const orders = Array.from({ length: 50 }, () => ({ ...p, refund_amount: "0.01" }));
    await request(app)
      .post("/v1/refund")
      .send({ ...ENVELOPE, refund_orders: orders });
    const second = await request(app)
      .post("/v1/refund")
      .send({ ...ENVELOPE, refund_orders: orders });
    const results = second.body.refund_orders as Record<string, string>[];
    expect(results.slice(0, 49).every((r) => /^\d+-\d{2}$/.test(r.refund_reference_id!))).toBe(true);
    expect(results[48]!.refund_reference_id).toBe(`${p.transaction_id}-99`);
    expect(results[49]!.refund_message).toMatch(/^E0405:Too many refunds for one payment/);
  });

  test("batch results show amounts with two places and currencies upper-case", async () => {
    const { app } = await makeApp();
    const p = await pay(app, { amount: "120.00" });
    const r = await one(app, "capture", { ...p, amount: "120", currency: "usd" });
    expect(r).toMatchObject({ capture_status: "1", amount: "120.00", currency: "USD" });
  });
});

describe("the clock", () => {
  test("an advance past ten years is refused and the server keeps its time", async () => {
    const { app } = await makeApp();
    for (const body of [{ advance: "9999999999d" }, { advance_seconds: 1e300 }, { advance: "3661d" }]) {
      const res = await request(app).post("/__sandbox/clock").send(body);
      expect(res.status).toBe(400);
    }
    expect((await request(app).get("/__sandbox/health")).status).toBe(200);
    const paid = await request(app)
      .post("/v1/authorise")
      .send(directPayment({ merchant_id: ACME.merchant_id }));
    expect(parseXml(paid.text).order_status).toBe("1");
  });
});

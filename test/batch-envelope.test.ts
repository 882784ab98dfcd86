// The interface document's batch envelope for capture, review, cancel and refund: limits, malformed envelopes,
// partial success, body formats, and the response signature.
import request from "supertest";
import { describe, expect, test } from "vitest";
import { ACME, ANY_SIGNATURE, makeApp, signResponseFields } from "./helpers.js";
import { ENVELOPE, ORDER_ARRAY, batch, pay, type BatchOp } from "./lifecycle-helpers.js";

const LIMITS: [BatchOp, number][] = [
  ["capture", 50],
  ["cancel", 50],
  ["refund", 50],
  ["review", 100],
];

const order = { transaction_id: "1", order_no: "x", currency: "USD", amount: "1.00", refund_amount: "1.00", review_flag: "1" };

describe("order limits", () => {
  test.each(LIMITS)("%s accepts %i orders and refuses one more, naming the limit", async (op, limit) => {
    const { app } = await makeApp();
    const atLimit = await batch(
      app,
      op,
      Array.from({ length: limit }, () => order),
    );
    expect(atLimit.status).toBe(200);
    expect(atLimit.body.return_status).toBe("1");
    expect(atLimit.body[ORDER_ARRAY[op]]).toHaveLength(limit);

    const over = await batch(
      app,
      op,
      Array.from({ length: limit + 1 }, () => order),
    );
    expect(over.body.return_status).toBe("0");
    expect(over.body.return_message).toContain(`limit is ${limit}`);
    expect(over.body.return_message).toMatch(/^I0030:/);
    expect(over.body[ORDER_ARRAY[op]]).toEqual([]); // the refusal keeps the answer's shape
  });
});

describe("malformed envelopes", () => {
  const ops: BatchOp[] = ["capture", "review", "cancel", "refund"];
  const cases: [string, (op: BatchOp) => Record<string, unknown>, RegExp][] = [
    ["a missing order array", () => ({ ...ENVELOPE }), /^I0031:.*missing/],
    ["an empty order array", (op) => ({ ...ENVELOPE, [ORDER_ARRAY[op]]: [] }), /^I0031:.*empty/],
    ["an order array that is a number", (op) => ({ ...ENVELOPE, [ORDER_ARRAY[op]]: 5 }), /^I0002:.*array/],
    ["an order array that is broken JSON text", (op) => ({ ...ENVELOPE, [ORDER_ARRAY[op]]: "[{" }), /^I0003:/],
    ["no merchant_id", (op) => ({ account_id: "A1", encryption_data: ANY_SIGNATURE, [ORDER_ARRAY[op]]: [order] }), /^I0001:.*merchant_id/],
    ["no encryption_data", (op) => ({ merchant_id: "M1", account_id: "A1", [ORDER_ARRAY[op]]: [order] }), /^I0013:/],
  ];
  test.each(ops.flatMap((op) => cases.map(([name, body, message]) => ({ op, name, body, message }))))(
    "$op with $name: return_status 0 and a message saying what is wrong",
    async ({ op, body, message }) => {
      const { app, deps } = await makeApp();
      const before = structuredClone(deps.store.data);
      const res = await request(app).post(`/v1/${op}`).send(body(op));
      expect(res.status).toBe(400);
      expect(res.body.return_status).toBe("0");
      expect(res.body.return_message).toMatch(message);
      expect(deps.store.data).toEqual(before);
    },
  );
});

describe("one batch, many outcomes", () => {
  test("each order gets its own result; a bad order never fails the others", async () => {
    const { app } = await makeApp();
    const a = await pay(app);
    const b = await pay(app, { amount: "20.00" });
    const res = await batch(app, "capture", [
      a,
      { ...a }, // the same payment again: already captured
      { ...b, amount: "25.00" }, // more than authorised
      { ...b, order_no: "someone-else" },
      { ...b, currency: "EUR" },
      { ...b, transaction_id: "0000000000000000" },
      { transaction_id: b.transaction_id }, // missing fields
      "not an order",
      { ...b, amount: "5.00" }, // a partial capture: fine
    ]);
    expect(res.body.return_status).toBe("1");
    const results = res.body.capture_orders as Record<string, string>[];
    expect(results.map((r) => r.capture_status)).toEqual(["1", "0", "0", "0", "0", "0", "0", "0", "1"]);
    expect(results.map((r) => String(r.error_message).split(":")[0])).toEqual(["", "E0101", "E0102", "E0002", "E0004", "E0001", "E0005", "E0005", ""]);
    expect(results[2]!.error_message).toContain("capture 25.00 exceeds authorised 20.00");
    expect(results[6]!.error_message).toMatch(/order_no is required/);
    // every element carries exactly the interface document's fields
    for (const r of results) expect(Object.keys(r)).toEqual(["amount", "capture_status", "currency", "error_message", "order_no", "transaction_id"]);
  });

  test("response elements carry the interface document's fields for every operation, in its (alphabetical) order", async () => {
    const { app } = await makeApp();
    const fields: Record<BatchOp, string[]> = {
      capture: ["amount", "capture_status", "currency", "error_message", "order_no", "transaction_id"],
      review: ["amount", "currency", "error_message", "order_no", "review_flag", "review_status", "transaction_id"],
      cancel: ["amount", "cancel_status", "currency", "error_message", "order_no", "transaction_id"],
      refund: [
        "amount",
        "currency",
        "order_no",
        "refund_amount",
        "refund_message",
        "refund_reason",
        "refund_reference",
        "refund_reference_id",
        "refund_status",
        "transaction_id",
      ],
    };
    for (const op of Object.keys(fields) as BatchOp[]) {
      const p = await pay(app);
      const res = await batch(app, op, [{ ...p, refund_amount: "1.00", review_flag: "1" }]);
      expect(Object.keys(res.body).sort()).toEqual(["account_id", "encryption_data", "merchant_id", "return_message", "return_status", ORDER_ARRAY[op]].sort());
      expect(Object.keys(res.body[ORDER_ARRAY[op]][0])).toEqual(fields[op]);
      for (const value of Object.values(res.body[ORDER_ARRAY[op]][0])) expect(typeof value).toBe("string");
      expect(res.body.encryption_data).toBe(signResponseFields(op, res.body, ACME.key));
    }
  });
});

describe("body formats", () => {
  test("form-urlencoded with bracketed orders, and a JSON document sent as a form", async () => {
    const { app } = await makeApp();
    const p = await pay(app);
    const form = await request(app)
      .post("/v1/capture")
      .type("form")
      .send(
        `merchant_id=${ACME.merchant_id}&account_id=${ACME.account_id}&encryption_data=${ANY_SIGNATURE}` +
          `&capture_orders[0][transaction_id]=${p.transaction_id}&capture_orders[0][order_no]=${p.order_no}` +
          `&capture_orders[0][currency]=USD&capture_orders[0][amount]=40.00`,
      );
    expect(form.body.capture_orders[0].capture_status).toBe("1");

    const q = await pay(app);
    const jsonAsForm = await request(app)
      .post("/v1/cancel")
      .set("content-type", "application/x-www-form-urlencoded")
      .send(JSON.stringify({ ...ENVELOPE, cancel_orders: [q] }));
    expect(jsonAsForm.body.cancel_orders[0].cancel_status).toBe("1");

    const r = await pay(app);
    const ordersAsJsonText = await request(app)
      .post("/v1/cancel")
      .type("form")
      .send({ ...ENVELOPE, cancel_orders: JSON.stringify([r]) });
    expect(ordersAsJsonText.body.cancel_orders[0].cancel_status).toBe("1");
  });
});

// Builders for lifecycle tests: a payment brought to any state through the real HTTP interface.
import request from "supertest";
import type { App } from "../src/server/app.js";
import { ACME, ANY_SIGNATURE, directPayment, parseXml } from "./helpers.js";

export const ENVELOPE = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, encryption_data: ANY_SIGNATURE };

export type PaymentRef = {
  transaction_id: string;
  order_no: string;
  currency: string;
  amount: string;
};

export type BatchOp = "capture" | "review" | "cancel" | "refund";
export const ORDER_ARRAY: Record<BatchOp, string> = {
  capture: "capture_orders",
  review: "review_orders",
  cancel: "cancel_orders",
  refund: "refund_orders",
};
export const STATUS_FIELD: Record<BatchOp, string> = {
  capture: "capture_status",
  review: "review_status",
  cancel: "cancel_status",
  refund: "refund_status",
};
export const MESSAGE_FIELD: Record<BatchOp, string> = {
  capture: "error_message",
  review: "error_message",
  cancel: "error_message",
  refund: "refund_message",
};

export async function pay(app: App, overrides: Record<string, unknown> = {}): Promise<PaymentRef> {
  const body = directPayment({ amount: "100.00", ...overrides });
  const res = await request(app).post("/v1/authorise").send(body);
  if (res.status !== 200) throw new Error(`payment failed: ${res.text}`);
  const xml = parseXml(res.text);
  return { transaction_id: String(xml.transaction_id), order_no: String(body.order_no), currency: String(body.currency), amount: String(xml.amount) };
}

export async function batch(app: App, op: BatchOp, orders: unknown[], envelope: Record<string, unknown> = ENVELOPE) {
  return request(app)
    .post(`/v1/${op}`)
    .send({ ...envelope, [ORDER_ARRAY[op]]: orders });
}

/** Runs one order and returns its result element; throws when the envelope itself failed. */
export async function one(app: App, op: BatchOp, order: Record<string, unknown>): Promise<Record<string, string>> {
  const res = await batch(app, op, [order]);
  if (res.status !== 200 || res.body.return_status !== "1") throw new Error(`${op} envelope failed: ${res.text}`);
  return res.body[ORDER_ARRAY[op]][0];
}

export type PaymentStateName = "pending" | "authorised" | "review" | "paid" | "partially_refunded" | "refunded" | "cancelled" | "declined";

/** A fresh payment of 100.00 on the manual-capture account A10001, brought to `state` through HTTP. */
export async function paymentIn(app: App, state: PaymentStateName): Promise<PaymentRef> {
  switch (state) {
    case "pending":
      return pay(app, { card: "4000002760003184" });
    case "review":
      return pay(app, { card: "4000000000009235" });
    case "declined":
      return pay(app, { card: "4000000000000002" });
    case "authorised":
      return pay(app);
    case "cancelled": {
      const p = await pay(app);
      await one(app, "cancel", p);
      return p;
    }
    case "paid": {
      const p = await pay(app);
      await one(app, "capture", p);
      return p;
    }
    case "partially_refunded": {
      const p = await paymentIn(app, "paid");
      await one(app, "refund", { ...p, refund_amount: "30.00" });
      return p;
    }
    case "refunded": {
      const p = await paymentIn(app, "paid");
      await one(app, "refund", { ...p, refund_amount: "100.00" });
      return p;
    }
  }
}

/** payment_status of one transaction, as the query operation reports it. */
export async function paymentStatus(app: App, transactionId: string): Promise<string> {
  const res = await request(app)
    .post("/v1/retrievalTrans")
    .type("form")
    .send({ ...ENVELOPE, transaction_id: transactionId });
  return res.body.orders_list[0].payment_status;
}

// Every payment state × every batch operation, through HTTP: which steps are legal, what they lead
// to, and the code that refuses the others. The expectations are written out here, independently
// of src/domain/transitions.ts, so a wrong cell in that table fails a test.
import request from "supertest";
import { describe, expect, test } from "vitest";
import { makeApp } from "./helpers.js";
import { ENVELOPE, MESSAGE_FIELD, STATUS_FIELD, one, pay, paymentIn, paymentStatus, type BatchOp, type PaymentStateName } from "./lifecycle-helpers.js";

type Step = "capture" | "cancel" | "approve" | "reject" | "refund";

// Each cell: the payment_status after a legal step, or the error code that refuses it.
const EXPECTED: Record<PaymentStateName, Record<Step, { status: string } | { code: string }>> = {
  pending: { capture: { code: "E0010" }, cancel: { code: "E0010" }, approve: { code: "E0301" }, reject: { code: "E0301" }, refund: { code: "E0010" } },
  authorised: { capture: { status: "3000" }, cancel: { status: "5000" }, approve: { code: "E0301" }, reject: { code: "E0301" }, refund: { code: "E0401" } },
  review: { capture: { code: "E0012" }, cancel: { status: "5000" }, approve: { status: "2000" }, reject: { status: "5000" }, refund: { code: "E0012" } },
  paid: { capture: { code: "E0101" }, cancel: { code: "E0101" }, approve: { code: "E0301" }, reject: { code: "E0301" }, refund: { status: "4000" } },
  partially_refunded: {
    capture: { code: "E0101" },
    cancel: { code: "E0101" },
    approve: { code: "E0301" },
    reject: { code: "E0301" },
    refund: { status: "4000" },
  },
  refunded: { capture: { code: "E0101" }, cancel: { code: "E0101" }, approve: { code: "E0301" }, reject: { code: "E0301" }, refund: { code: "E0403" } },
  cancelled: { capture: { code: "E0201" }, cancel: { code: "E0201" }, approve: { code: "E0301" }, reject: { code: "E0301" }, refund: { code: "E0201" } },
  declined: { capture: { code: "E0011" }, cancel: { code: "E0011" }, approve: { code: "E0301" }, reject: { code: "E0301" }, refund: { code: "E0011" } },
};

const STATE_CODES: Record<PaymentStateName, string> = {
  pending: "1000",
  authorised: "2000",
  review: "2100",
  paid: "3000",
  partially_refunded: "4000",
  refunded: "4100",
  cancelled: "5000",
  declined: "6000",
};

const OP_OF: Record<Step, { op: BatchOp; extra: Record<string, string> }> = {
  capture: { op: "capture", extra: {} },
  cancel: { op: "cancel", extra: {} },
  approve: { op: "review", extra: { review_flag: "approve" } },
  reject: { op: "review", extra: { review_flag: "reject" } },
  refund: { op: "refund", extra: { refund_amount: "10.00" } },
};

const cases = Object.entries(EXPECTED).flatMap(([state, row]) =>
  Object.entries(row).map(([step, expected]) => ({ state: state as PaymentStateName, step: step as Step, expected })),
);

describe("transitions: every state × every operation", () => {
  test.each(cases)("$step on a $state payment", async ({ state, step, expected }) => {
    const { app } = await makeApp();
    const payment = await paymentIn(app, state);
    expect(await paymentStatus(app, payment.transaction_id)).toBe(STATE_CODES[state]);

    const { op, extra } = OP_OF[step];
    const result = await one(app, op, { ...payment, ...extra });
    const after = await paymentStatus(app, payment.transaction_id);
    if ("status" in expected) {
      expect(result[STATUS_FIELD[op]]).toBe("1");
      expect(after).toBe(expected.status);
    } else {
      expect(result[STATUS_FIELD[op]]).toBe("0");
      expect(result[MESSAGE_FIELD[op]]).toMatch(new RegExp(`^${expected.code}:`));
      // the refusal names the payment's current state and code
      expect(result[MESSAGE_FIELD[op]]).toContain(`(${STATE_CODES[state]})`);
      expect(after).toBe(STATE_CODES[state]);
    }
  });
});

describe("auto-capture accounts", () => {
  test("approving a held payment on an auto-capture account makes it paid", async () => {
    const { app } = await makeApp();
    const held = await pay(app, { account_id: "A10002", card: "4000000000009235" });
    const res = await request(app)
      .post("/v1/review")
      .send({ ...ENVELOPE, account_id: "A10002", review_orders: [{ ...held, review_flag: "1" }] });
    expect(res.body.review_orders[0].review_status).toBe("1");
    const query = await request(app)
      .post("/v1/retrievalTrans")
      .type("form")
      .send({ ...ENVELOPE, account_id: "A10002", transaction_id: held.transaction_id });
    expect(query.body.orders_list[0].payment_status).toBe("3000");
  });
});

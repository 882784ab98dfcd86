// Refunds: partial and many, never beyond what was captured; accepted now, processed or failed
// later (scenario, clock or operator); refund search shows the truth after every step.
import request from "supertest";
import { describe, expect, test } from "vitest";
import { ACME, makeApp } from "./helpers.js";
import { ENVELOPE, batch, one, pay, paymentIn, paymentStatus, type PaymentRef } from "./lifecycle-helpers.js";
import type { App } from "../src/server/app.js";

async function search(app: App, selector: Record<string, string> = {}) {
  const res = await request(app)
    .post("/v1/retrievalRefund")
    .type("form")
    .send({ ...ENVELOPE, ...selector });
  expect(res.status).toBe(200);
  expect(res.body.return_status).toBe("1");
  return res.body.refund_orders as Record<string, string>[];
}

const refundOf = (p: PaymentRef, refund_amount: string, extra: Record<string, string> = {}) => ({ ...p, refund_amount, ...extra });
const advance = (app: App, advance: string) => request(app).post("/__sandbox/clock").send({ advance });

describe("partial refunds", () => {
  test("many partial refunds up to the captured amount, numbered -01, -02, …; then nothing more", async () => {
    const { app } = await makeApp();
    const p = await paymentIn(app, "paid"); // 100.00 captured
    const first = await one(app, "refund", refundOf(p, "30.00", { refund_reason: "damaged" }));
    expect(first).toMatchObject({ refund_status: "1", refund_reference_id: `${p.transaction_id}-01`, refund_amount: "30.00", refund_reason: "damaged" });
    expect(first.refund_message).toMatch(/^0000:/);
    expect(await paymentStatus(app, p.transaction_id)).toBe("4000");

    const tooMuch = await one(app, "refund", refundOf(p, "80.00"));
    expect(tooMuch.refund_status).toBe("0");
    expect(tooMuch.refund_message).toBe("E0402:Refund exceeds the refundable amount: refund 80.00 exceeds refundable 70.00");
    expect(tooMuch.refund_reference_id).toBe("");

    const second = await one(app, "refund", refundOf(p, "70.00"));
    expect(second.refund_reference_id).toBe(`${p.transaction_id}-02`);
    expect(await paymentStatus(app, p.transaction_id)).toBe("4100");

    const after = await one(app, "refund", refundOf(p, "0.01"));
    expect(after.refund_message).toMatch(/^E0403:/);
  });

  test("a partial capture limits refunds to what was captured", async () => {
    const { app } = await makeApp();
    const p = await pay(app); // 100.00 authorised
    expect((await one(app, "capture", { ...p, amount: "40.00" })).capture_status).toBe("1");
    const r = await one(app, "refund", refundOf(p, "50.00"));
    expect(r.refund_message).toContain("refund 50.00 exceeds refundable 40.00");
    expect((await one(app, "refund", refundOf(p, "40.00"))).refund_status).toBe("1");
    expect(await paymentStatus(app, p.transaction_id)).toBe("4100");
  });

  test.each([
    ["an unknown transaction", { transaction_id: "9999999999999999" }, "E0001"],
    ["another order's number", { order_no: "not-this-one" }, "E0002"],
    ["the wrong amount", { amount: "99.00" }, "E0003"],
    ["the wrong currency", { currency: "EUR" }, "E0004"],
    ["a zero refund", { refund_amount: "0.00" }, "E0005"],
    ["a malformed refund_amount", { refund_amount: "ten" }, "E0005"],
  ])("%s is refused with its own code", async (_name, change, code) => {
    const { app } = await makeApp();
    const p = await paymentIn(app, "paid");
    const r = await one(app, "refund", { ...refundOf(p, "10.00"), ...change });
    expect(r.refund_status).toBe("0");
    expect(String(r.refund_message).split(":")[0]).toBe(code);
    expect(await search(app, { transaction_id: p.transaction_id })).toEqual([]);
  });
});

describe("refunds settle later", () => {
  test("accepted now with an empty processing date; processed after the delay, seen in refund search", async () => {
    const { app } = await makeApp();
    const p = await paymentIn(app, "paid");
    await one(app, "refund", refundOf(p, "25.00"));
    const [accepted] = await search(app, { transaction_id: p.transaction_id });
    expect(accepted).toMatchObject({ refund_status: "1", refund_processing_date: "", refund_reference: "", payment_status: "4000", refund_amount: "25.00" });
    expect(accepted!.refund_date).toMatch(/^\d{14}$/);

    await advance(app, "10s");
    const [processed] = await search(app, { transaction_id: p.transaction_id });
    expect(processed!.refund_status).toBe("2");
    expect(processed!.refund_processing_date).toMatch(/^\d{14}$/);
    expect(processed!.refund_reference).toMatch(/^ARN\d+$/);
    expect(processed!.payment_status).toBe("4000");
  });

  test("the default scenario fails a refund of .13 later and gives the money back", async () => {
    const { app } = await makeApp();
    const p = await paymentIn(app, "paid");
    await one(app, "refund", refundOf(p, "10.13"));
    expect(await paymentStatus(app, p.transaction_id)).toBe("4000");
    await advance(app, "1m");
    const [failed] = await search(app, { refund_reference_id: `${p.transaction_id}-01` });
    expect(failed).toMatchObject({ refund_status: "3", payment_status: "3000" });
    expect(failed!.refund_processing_date).toMatch(/^\d{14}$/);
    // the failed amount is refundable again
    expect((await one(app, "refund", refundOf(p, "100.00"))).refund_status).toBe("1");
  });

  test("an operator call settles an accepted refund at once, as processed or failed", async () => {
    const { app } = await makeApp();
    const p = await paymentIn(app, "paid");
    await one(app, "refund", refundOf(p, "10.17")); // the default scenario holds .17 for an hour
    await one(app, "refund", refundOf(p, "20.17"));
    const ok = await request(app).post(`/__sandbox/refunds/${p.transaction_id}-01/settle`).send({ result: "processed" });
    expect(ok.status).toBe(200);
    const ko = await request(app).post(`/__sandbox/refunds/${p.transaction_id}-02/settle`).send({ result: "failed" });
    expect(ko.body.refund.state).toBe("failed");
    const again = await request(app).post(`/__sandbox/refunds/${p.transaction_id}-02/settle`).send({ result: "processed" });
    expect(again.status).toBe(409);
    expect((await request(app).post(`/__sandbox/refunds/nope/settle`).send({})).status).toBe(404);
    expect((await request(app).post(`/__sandbox/refunds/${p.transaction_id}-01/settle`).send({ result: "maybe" })).status).toBe(400);

    const found = await search(app, { transaction_id: p.transaction_id });
    expect(found.map((r) => [r.refund_reference_id, r.refund_status])).toEqual([
      [`${p.transaction_id}-02`, "3"],
      [`${p.transaction_id}-01`, "2"],
    ]);
  });
});

describe("refund search", () => {
  test("every field of the seed, as strings, after each step of a payment's life", async () => {
    const { app } = await makeApp();
    const p = await paymentIn(app, "paid");
    expect(await search(app, { order_no: p.order_no })).toEqual([]);
    await one(app, "refund", refundOf(p, "60.00", { refund_reason: "<b>too big</b>" }));
    const [r] = await search(app, { order_no: p.order_no });
    expect(Object.keys(r!)).toEqual([
      "transaction_id",
      "order_no",
      "amount",
      "refund_status",
      "payment_status",
      "refund_amount",
      "refund_reference",
      "currency",
      "refund_reason",
      "refund_reference_id",
      "refund_date",
      "refund_processing_date",
    ]);
    for (const v of Object.values(r!)) expect(typeof v).toBe("string");
    expect(r!.refund_reason).toBe("<b>too big</b>");
    await one(app, "refund", refundOf(p, "40.00"));
    const both = await search(app, { refund_reference_id: `${p.transaction_id}-01,${p.transaction_id}-02` });
    expect(both.map((x) => x.payment_status)).toEqual(["4100", "4100"]);
  });

  test("fixture refunds are found; other merchants' refunds never are; the limit is 100", async () => {
    const { app } = await makeApp();
    const fixture = await search(app, { order_no: "ORD-1003" });
    expect(fixture).toHaveLength(1);
    expect(fixture[0]).toMatchObject({ refund_status: "2", payment_status: "4000", refund_amount: "50.00", currency: "EUR", refund_date: "20261004090000" });
    const recent = await search(app);
    expect(recent.length).toBeGreaterThan(0);
    for (const r of recent) expect(["1000000000001003", "1000000000001004"]).toContain(r.transaction_id);

    const other = await request(app)
      .post("/v1/retrievalRefund")
      .type("form")
      .send({ ...ENVELOPE, merchant_id: "M-other", order_no: "ORD-1003" });
    expect(other.body.refund_orders).toEqual([]);

    const many = Array.from({ length: 101 }, (_, i) => `o${i}`).join(",");
    const over = await request(app)
      .post("/v1/retrievalRefund")
      .type("form")
      .send({ ...ENVELOPE, order_no: many });
    expect(over.body.return_status).toBe("0");
    expect(over.body.return_message).toContain("100");
  });

  test("refund search answers JSON bodies and signs its response", async () => {
    const { app } = await makeApp();
    const res = await request(app)
      .post("/v1/retrievalRefund")
      .send({ ...ENVELOPE, transaction_id: ["1000000000001003", "1000000000001004"] });
    expect(res.body.refund_orders).toHaveLength(2);
    expect(res.body.encryption_data).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body.merchant_id).toBe(ACME.merchant_id);
  });
});

describe("a refund batch with mixed outcomes", () => {
  test("partial success inside one refund batch", async () => {
    const { app } = await makeApp();
    const a = await paymentIn(app, "paid");
    const b = await paymentIn(app, "authorised");
    const res = await batch(app, "refund", [refundOf(a, "10.00"), refundOf(b, "10.00"), refundOf(a, "95.00"), refundOf(a, "90.00")]);
    const results = res.body.refund_orders as Record<string, string>[];
    expect(results.map((r) => r.refund_status)).toEqual(["1", "0", "0", "1"]);
    expect(results[1]!.refund_message).toMatch(/^E0401:/);
    expect(results[2]!.refund_message).toContain("refund 95.00 exceeds refundable 90.00");
    expect(results[3]!.refund_reference_id).toBe(`${a.transaction_id}-02`);
  });
});

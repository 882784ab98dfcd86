// Card numbers masked in every field (docs/security.md): a Luhn-valid run of 13–19 digits typed
// into any field of a request (a name, an address, a phone, a web address, an item's name) is
// masked before it is stored, logged, put in the HAR, the signing string or a notification;
// identifiers and times are kept as sent. The signature is still checked over what was sent.
// On one process, one Redis and a Cluster (over HTTP; on one process, the request log's kept text too).
import fc from "fast-check";
import qs from "qs";
import request from "supertest";
import { describe, expect, test } from "vitest";
import { ACME, directPayment, makeApp, parseXml, signRequest, textOf } from "./helpers.js";
import { REPLICA_MODE } from "./replica-helpers.js";

const TYPED = {
  first_name: "Ann 4111 1111 1111 1111",
  delivery_address: "Card 4242-4242-4242-4242 Street 1",
  shopper_phone: "5555555555554444",
  website: "https://shop.example.com/?c=378282246310005",
  items: "Gift 6011111111111117#,#SKU-1#,#10.00#,#1",
  custom: '{"memo":"3530111333300000"}',
};
const FULL = [
  "4111111111111111",
  "4111 1111 1111 1111",
  "4242-4242-4242-4242",
  "4242424242424242",
  "5555555555554444",
  "378282246310005",
  "6011111111111117",
  "3530111333300000",
];

describe("a card number in any field", () => {
  test("is masked in the payment, the query's answer, the request log, its signing string, the HAR and the notification; the signature over what was sent matches", async () => {
    const { app } = await makeApp({ signatureMode: "strict" });
    // a Luhn-valid order_no and a 16-digit id are the merchant's identifiers: kept as sent
    const body = directPayment({ ...TYPED, card: "4000000000000077", order_no: "4012888888881881", notify_url: "http://127.0.0.1:9/notify" });
    const res = await request(app)
      .post("/v1/authorise")
      .send({ ...body, encryption_data: signRequest("authorise", body, ACME.key) });
    expect(res.status, res.text).toBe(200);
    expect(res.get("X-Sandbox-Signature")).toBe("matched");
    const transactionId = textOf(parseXml(res.text).transaction_id);

    const shown: Record<string, string> = {
      transactions: (
        await request(app)
          .get("/__sandbox/transactions")
          .query({ merchant_id: ACME.merchant_id, order_no: body.order_no as string })
          .expect(200)
      ).text,
      requests: (
        await request(app)
          .get("/__sandbox/requests")
          .query({ order_no: body.order_no as string })
          .expect(200)
      ).text,
      har: (await request(app).get("/__sandbox/requests.har").query({ merchant_id: ACME.merchant_id }).expect(200)).text,
      notifications: (await request(app).get("/__sandbox/notifications").query({ merchant_id: ACME.merchant_id }).expect(200)).text,
      query: (
        await request(app)
          .post("/v1/retrievalTrans")
          .send(
            (() => {
              const q = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, transaction_id: transactionId };
              return { ...q, encryption_data: signRequest("retrievalTrans", q, ACME.key) };
            })(),
          )
          .expect(200)
      ).text,
    };
    for (const [where, text] of Object.entries(shown)) {
      for (const number of FULL) expect(text, `${where} holds ${number}`).not.toContain(number);
    }
    const payment = JSON.parse(shown.transactions!).transactions[0];
    expect(payment.order_no).toBe("4012888888881881");
    expect(payment.transaction_id).toBe(transactionId);
    expect(JSON.stringify(payment)).toContain("Card 424242******4242 Street 1");
    const log = JSON.parse(shown.requests!).requests[0];
    expect(log.signature.matched).toBe(true);
    expect(log.signature.signingString).toContain("Ann 411111******1111");
    expect(shown.har).toContain("601111******1117");
    expect(shown.query).toContain("555555******4444");
    expect(JSON.parse(shown.notifications!).notifications.length).toBeGreaterThan(0);
  });

  test("wherever it is typed (any free-text name, at any depth, in an array), escaped or not, in JSON or a form, in a payment or a query that names no card: in neither the stored payment, the request log nor the HAR", async () => {
    const { app, deps } = await makeApp();
    let sent = 0;
    // what holds it, innermost first: a free-text name, then the objects around it (none: a top-level field)
    const placement = fc.tuple(
      fc.constantFrom("first_name", "note", "custom", "shopper_phone", "billing_address", "gift_message"),
      fc.array(fc.constantFrom("meta", "extra", "lines"), { maxLength: 3 }),
      fc.boolean(),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...FULL),
        placement,
        fc.constantFrom("json", "escaped", "form"),
        fc.boolean(),
        async (card, [name, around, inArray], encoding, query) => {
          const orderNo = `ANYWHERE-${++sent}`;
          const typed = `paid with ${card} today`;
          let value: unknown = { [name]: inArray ? [typed] : typed };
          for (const key of around) value = { [key]: value };
          // a query names no card or security code: only its free text can hold one
          const fields = query
            ? { merchant_id: ACME.merchant_id, account_id: ACME.account_id, order_no: orderNo, encryption_data: "a".repeat(64) }
            : directPayment({ order_no: orderNo });
          const body = { ...fields, ...(value as object) };
          let text = encoding === "form" ? qs.stringify(body) : JSON.stringify(body);
          // each digit of the number as \u003N: the same JSON, no run of digits in its text
          if (encoding === "escaped")
            text = text.replace(
              card,
              card.replace(/\d/g, (d) => `\\u003${d}`),
            );
          const answer = await request(app)
            .post(query ? "/v1/retrievalTrans" : "/v1/authorise")
            .set("Content-Type", encoding === "form" ? "application/x-www-form-urlencoded" : "application/json")
            .send(text);
          const kept = await Promise.all(
            [
              ["/__sandbox/requests", { order_no: orderNo }],
              ["/__sandbox/requests.har", { order_no: orderNo }],
              ["/__sandbox/transactions", { merchant_id: ACME.merchant_id, order_no: orderNo }],
            ].map(
              async ([path, query]) =>
                (
                  await request(app)
                    .get(path as string)
                    .query(query as object)
                    .expect(200)
                ).text,
            ),
          );
          expect(kept[0], "the request was logged").toContain(orderNo);
          // the text the request log keeps (its HAR export masks once more on the way out): in this process's memory
          if (!REPLICA_MODE) kept.push(deps.requests.exchange(answer.get("X-Request-Id")!)!.body);
          const digits = card.replace(/[ -]/g, "");
          for (const text of kept) {
            expect(text).not.toContain(card);
            expect(text).not.toContain(digits);
            expect(text).not.toContain(encodeURIComponent(card));
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  test("a payout's bank account number and a capture's ids stay as sent", async () => {
    const { app } = await makeApp();
    const paid = await request(app)
      .post("/v1/authorise")
      .send(directPayment({ amount: "30.00" }))
      .expect(200);
    const tx = textOf(parseXml(paid.text).transaction_id);
    const order = { transaction_id: tx, order_no: "4012888888881881", currency: "USD", amount: "30.00" };
    // the transaction id is whatever the gateway gave; the order_no here is Luhn-valid and not the payment's
    const captured = await request(app)
      .post("/v1/capture")
      .send({ merchant_id: ACME.merchant_id, account_id: ACME.account_id, encryption_data: "a".repeat(64), capture_orders: [order] })
      .expect(200);
    expect(captured.body.capture_orders[0]).toMatchObject({ transaction_id: tx, order_no: "4012888888881881" });
    const payout = await request(app)
      .post("/v1/payout")
      .send({
        merchant_id: ACME.merchant_id,
        account_id: ACME.account_id,
        encryption_data: "a".repeat(64),
        request_id: "3f1c2a9e-8b7d-4c6e-9a5b-0000000000aa",
        payment_currency: "USD",
        payment_amount: "10.00",
        payment_method: "SWIFT",
        beneficiary: { first_name: "Ann", last_name: "Lee", bank_details: { account_number: "4111111111111111", bank_country_code: "US" } },
      });
    expect(payout.status, payout.text).toBe(200);
    const listed = (await request(app).get("/__sandbox/payouts").query({ merchant_id: ACME.merchant_id }).expect(200)).text;
    expect(listed).toContain("4111111111111111");
  });
});

// Gateway request bodies for property tests: a valid request of every operation (naming records of
// the fixtures), values on the edges of the fields' rules, and bodies generated around the valid
// ones (fields dropped, replaced by awkward values, added). test/fast-parse.test.ts checks the
// validation's fast path with them; test/gateway-fuzz.test.ts sends them over HTTP.
import fc from "fast-check";
import { apmPayment, directPayment, fullApmRequest, fullPaymentRequest } from "./helpers.js";
import { ENVELOPE } from "./lifecycle-helpers.js";

// orders of the fixtures, in the states their operation acts on (on account A10001, ENVELOPE's)
const AUTHORISED = { transaction_id: "1000000000001002", order_no: "ORD-1002", currency: "USD", amount: "75.50" };
const IN_REVIEW = { transaction_id: "1000000000001007", order_no: "ORD-1007", currency: "USD", amount: "560.00" };
const PART_REFUNDED = { transaction_id: "1000000000001003", order_no: "ORD-1003", currency: "EUR", amount: "200.00" };
const PAYOUT = {
  ...ENVELOPE,
  request_id: "3f1c2a9e-8b7d-4c6e-9a5b-000000000001",
  payment_currency: "USD",
  payment_amount: "100.00",
  payment_method: "SWIFT",
  beneficiary: { first_name: "Ann", last_name: "Lee", bank_details: { account_number: "123456789", bank_country_code: "US" } },
};

/** A payment request as a checkout takes it: the payer types the card on the hosted page. */
const withoutCard = (body: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(body).filter(([name]) => !["card", "expiration_month", "expiration_year", "security_code", "secure_payment", "accept"].includes(name)),
  );

/** Valid requests per operation, naming records of the fixtures (the operation's own schema validates them). */
export const VALID: Record<string, Record<string, unknown>[]> = {
  authorise: [fullPaymentRequest(), directPayment(), fullApmRequest(), apmPayment()],
  checkout: [withoutCard(fullPaymentRequest()), withoutCard(directPayment())],
  capture: [{ ...ENVELOPE, capture_orders: [AUTHORISED, { ...AUTHORISED, order_no: "ORD-2" }] }],
  cancel: [{ ...ENVELOPE, cancel_orders: [AUTHORISED] }],
  review: [{ ...ENVELOPE, review_orders: [{ ...IN_REVIEW, review_flag: "1" }] }],
  refund: [{ ...ENVELOPE, refund_orders: [{ ...PART_REFUNDED, refund_amount: "3.00", refund_reason: "damaged" }] }],
  retrievalTrans: [
    { ...ENVELOPE, order_no: "ORD-1002" },
    { ...ENVELOPE, transaction_id: "1000000000001003", start_time: "2026-01-01 00:00:00" },
  ],
  retrievalRefund: [{ ...ENVELOPE, transaction_id: "1000000000001003" }],
  subscriptionCancel: [{ ...ENVELOPE, account_id: "A10002", recurring_id: "R20261009000001" }],
  paymentMethodsOptimise: [{ ...ENVELOPE, currency: "BRL", amount: "25.00", billing_country: "BR" }],
  payout: [PAYOUT],
};

/** Values that sit on the edges of the fields' rules. */
const AWKWARD = [
  "",
  " ",
  "abc",
  "10.00",
  "0.00",
  "0",
  "1",
  "-1",
  "12.345",
  "1e999",
  "NaN",
  "USD",
  "usd",
  "US",
  "u",
  "2030",
  "12",
  "123",
  "4242424242424242",
  "https://shop.example.com/r",
  "ftp://x",
  "jane@example.com",
  "jane@",
  "01-02-1990",
  "1990-02-01",
  "-8",
  "+5.5",
  "24",
  "month",
  "fortnight",
  "2026-01-01",
  "YES",
  "NO",
  "Tent#,#T-1#,#10.00#,#1",
  "Tent#,#T-1",
  "3f1c2a9e-8b7d-4c6e-9a5b-1d2e3f4a5b6c",
  '{"a":"b"}',
  "[]",
  JSON.stringify([AUTHORISED]),
  "\u{1F600}",
  "x".repeat(70),
  '"><script>alert(1)</script>',
  "]]><x>&amp;",
];
export const awkward: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...AWKWARD),
  fc.string({ maxLength: 6 }),
  fc.integer({ min: -3, max: 3000 }),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.constant([AUTHORISED]),
);

const ABSENT = Symbol("absent");
/** A value like `base`: mostly kept, sometimes replaced by an awkward one; objects and arrays changed inside. */
export function around(base: unknown, depth = 0): fc.Arbitrary<unknown> {
  if (Array.isArray(base)) return fc.oneof({ weight: 6, arbitrary: fc.tuple(...base.map((b) => around(b, depth + 1))) }, { weight: 1, arbitrary: awkward });
  if (base !== null && typeof base === "object") {
    const entries = Object.entries(base as Record<string, unknown>);
    const kept = entries.map(([k, v]) =>
      fc.oneof({ weight: 6, arbitrary: around(v, depth + 1) }, { weight: 1, arbitrary: fc.constant<unknown>(ABSENT) }).map((x) => [k, x] as const),
    );
    const added = fc.array(
      fc.tuple(
        fc.constantFrom("extra", "note", "subscription", "additional_information", "customer_details", "refund_reason", "card", "token_id", "__proto__"),
        awkward,
      ),
      { maxLength: 2 },
    );
    const object = fc.tuple(fc.tuple(...kept), added).map(([fields, more]) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of [...fields, ...more])
        if (v !== ABSENT) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      return out;
    });
    return depth === 0 ? object : fc.oneof({ weight: 6, arbitrary: object }, { weight: 1, arbitrary: awkward });
  }
  return fc.oneof({ weight: 5, arbitrary: fc.constant(base) }, { weight: 2, arbitrary: awkward });
}

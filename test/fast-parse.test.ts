// Validation's fast path (src/http/fast-parse.ts) must never change an answer: for any body, it
// either gives exactly zod's output (same values, same key order) or leaves the body to zod.
// Bodies are generated around valid requests of every operation, with fields dropped, replaced by
// awkward values (numbers, nulls, objects, JSON strings, patterns just off) and added.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { OPERATIONS } from "../src/app.js";
import { apmRequest, paymentRequest } from "../src/gateway/payment-schema.js";
import { compileFastParse, fastParse, NOT_SURE } from "../src/http/fast-parse.js";
import { apmPayment, directPayment, fullApmRequest, fullPaymentRequest } from "./helpers.js";
import { ENVELOPE } from "./lifecycle-helpers.js";
const ORDER = { transaction_id: "1234567890123456", order_no: "ORD-1", currency: "USD", amount: "10.00" };
const PAYOUT = {
  ...ENVELOPE,
  request_id: "3f1c2a9e-8b7d-4c6e-9a5b-000000000001",
  payment_currency: "USD",
  payment_amount: "100.00",
  payment_method: "SWIFT",
  beneficiary: { first_name: "Ann", last_name: "Lee", bank_details: { account_number: "123456789", bank_country_code: "US" } },
};

/** Valid requests per operation (the operation's own schema validates them). */
const VALID: Record<string, Record<string, unknown>[]> = {
  authorise: [fullPaymentRequest(), directPayment(), fullApmRequest(), apmPayment()],
  checkout: [fullPaymentRequest({ card: "", security_code: "" }), directPayment()],
  capture: [{ ...ENVELOPE, capture_orders: [ORDER, { ...ORDER, order_no: "ORD-2" }] }],
  cancel: [{ ...ENVELOPE, cancel_orders: [ORDER] }],
  review: [{ ...ENVELOPE, review_orders: [{ ...ORDER, review_flag: "1" }] }],
  refund: [{ ...ENVELOPE, refund_orders: [{ ...ORDER, refund_amount: "3.00", refund_reason: "damaged" }] }],
  retrievalTrans: [{ ...ENVELOPE, order_no: "ORD-1" }, { ...ENVELOPE, transaction_id: "1234567890123456", start_time: "2026-01-01 00:00:00" }],
  retrievalRefund: [{ ...ENVELOPE, transaction_id: "1234567890123456" }],
  subscriptionCancel: [{ ...ENVELOPE, recurring_id: "R12345678901234" }],
  paymentMethodsOptimise: [{ ...ENVELOPE, currency: "BRL", amount: "25.00", billing_country: "BR" }],
  payout: [PAYOUT],
};

/** Values that sit on the edges of the fields' rules. */
const AWKWARD = [
  "", " ", "abc", "10.00", "0.00", "0", "1", "-1", "12.345", "1e999", "NaN", "USD", "usd", "US", "u", "2030", "12", "123", "4242424242424242",
  "https://shop.example.com/r", "ftp://x", "jane@example.com", "jane@", "01-02-1990", "1990-02-01", "-8", "+5.5", "24", "month", "fortnight",
  "2026-01-01", "YES", "NO", "Tent#,#T-1#,#10.00#,#1", "Tent#,#T-1", "3f1c2a9e-8b7d-4c6e-9a5b-1d2e3f4a5b6c", '{"a":"b"}', "[]",
  JSON.stringify([ORDER]), "\u{1F600}", "x".repeat(70),
];
const awkward: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...AWKWARD),
  fc.string({ maxLength: 6 }),
  fc.integer({ min: -3, max: 3000 }),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.constant([ORDER]),
);

const ABSENT = Symbol("absent");
/** A value like `base`: mostly kept, sometimes replaced by an awkward one; objects and arrays changed inside. */
function around(base: unknown, depth = 0): fc.Arbitrary<unknown> {
  if (Array.isArray(base)) return fc.oneof({ weight: 6, arbitrary: fc.tuple(...base.map((b) => around(b, depth + 1))) }, { weight: 1, arbitrary: awkward });
  if (base !== null && typeof base === "object") {
    const entries = Object.entries(base as Record<string, unknown>);
    const kept = entries.map(([k, v]) => fc.oneof({ weight: 6, arbitrary: around(v, depth + 1) }, { weight: 1, arbitrary: fc.constant<unknown>(ABSENT) }).map((x) => [k, x] as const));
    const added = fc.array(fc.tuple(fc.constantFrom("extra", "note", "subscription", "additional_information", "customer_details", "refund_reason", "card", "token_id", "__proto__"), awkward), { maxLength: 2 });
    const object = fc.tuple(fc.tuple(...kept), added).map(([fields, more]) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of [...fields, ...more]) if (v !== ABSENT) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      return out;
    });
    return depth === 0 ? object : fc.oneof({ weight: 6, arbitrary: object }, { weight: 1, arbitrary: awkward });
  }
  return fc.oneof({ weight: 5, arbitrary: fc.constant(base) }, { weight: 2, arbitrary: awkward });
}

/** Objects as [key, value] lists, so that a comparison also sees the keys' order. */
function ordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(ordered);
  if (value !== null && typeof value === "object") return Object.entries(value).map(([k, v]) => [k, ordered(v)]);
  return value;
}

/** fastParse as it runs (object walks generated as code), or as where code generation is refused (a loop). */
type Parser = (schema: z.ZodType, body: unknown) => unknown;
const looped = new Map<z.ZodType, (body: unknown) => unknown>();
const PARSERS: [string, Parser][] = [
  ["generated code", fastParse],
  ["a loop (no code generation)", (schema, body) => (looped.get(schema) ?? looped.set(schema, compileFastParse(schema, false)).get(schema)!)(body)],
];

function agreesWithZod(schema: z.ZodType, body: unknown, parse: Parser = fastParse): void {
  const fast = parse(schema, body);
  if (fast === NOT_SURE) return;
  const zod = schema.safeParse(body);
  expect(zod.success, `fast path accepted what zod refuses: ${JSON.stringify(body)}`).toBe(true);
  expect(ordered(fast)).toStrictEqual(ordered(zod.data));
}

const schemas: [string, z.ZodType, Record<string, unknown>[]][] = [
  ...OPERATIONS.map((op): [string, z.ZodType, Record<string, unknown>[]] => [op.name, op.request, VALID[op.name]!]),
  ["direct payment", paymentRequest, VALID.authorise!.slice(0, 2)],
  ["APM payment", apmRequest, VALID.authorise!.slice(2)],
];

describe.each(PARSERS)("validation's fast path (%s) gives zod's answer or none", (_mode, parse) => {
  test.each(schemas)("%s: the valid requests are answered by the fast path, with zod's output", (_name, schema, valid) => {
    expect(valid.length).toBeGreaterThan(0);
    for (const body of valid) {
      expect(schema.safeParse(body).success).toBe(true);
      // the common case takes the fast path: if a zod upgrade or a new kind of field turned it off, this says so
      expect(parse(schema, body)).not.toBe(NOT_SURE);
      agreesWithZod(schema, body, parse);
    }
  });

  test.each(schemas)("%s: generated bodies around the valid ones", (_name, schema, valid) => {
    fc.assert(fc.property(fc.constantFrom(...valid).chain((b) => around(b)), (body) => agreesWithZod(schema, body, parse)), { numRuns: 400 });
  });

  test("every kind of schema it compiles, against zod on generated values", () => {
    const schema = z.looseObject({
      name: z.string().trim().min(2),
      kind: z.enum(["a", "b"]).optional(),
      flag: z.literal("on").nullable().optional(),
      count: z.preprocess((v) => (typeof v === "string" ? Number(v) : v), z.number().int().min(0)).optional(),
      ratio: z.preprocess((v) => (typeof v === "string" ? Number(v) : v), z.number()).optional(),
      either: z.union([z.string().regex(/^\d+$/), z.number()]).optional(),
      fixed: z.strictObject({ x: z.string() }).optional(),
      stripped: z.object({ y: z.boolean() }).optional(),
      list: z.array(z.string().max(3)).min(1).optional(),
      defaulted: z.string().default("d"),
      told: z.string().transform((s, ctx) => {
        if (s === "no") ctx.issues.push({ code: "custom", message: "no", input: s });
        return s.toUpperCase();
      }).optional(),
    }).refine((o) => o.name !== "zz", "not zz");
    // mostly values the field accepts, sometimes one it refuses, now and then anything
    const mostly = (good: unknown[], bad: unknown[]) =>
      fc.oneof({ weight: 16, arbitrary: fc.constantFrom(...good) }, { weight: 2, arbitrary: fc.constantFrom(...bad) }, { weight: 1, arbitrary: awkward });
    const value = fc.record(
      {
        name: mostly([" ab ", "abc"], ["a", "zz", " z "]),
        kind: mostly(["a", "b"], ["c"]),
        flag: mostly(["on", null], ["off"]),
        count: mostly(["3", 4], ["-1", "2.5"]),
        ratio: mostly(["1.5", 2], ["1e999", "x", Number.POSITIVE_INFINITY]),
        either: mostly(["12", 5], ["x"]),
        fixed: mostly([{ x: "1" }], [{ x: "1", z: 2 }]),
        stripped: mostly([{ y: true }, { y: false, q: 1 }], [{ q: 1 }]),
        list: mostly([["a"], ["a", "bcd"]], [[], ["abcd"]]),
        defaulted: mostly(["x"], [7]),
        told: mostly(["yes"], ["no"]),
        other: awkward,
      },
      { requiredKeys: ["name", "defaulted"] },
    );
    let answered = 0;
    fc.assert(
      fc.property(value, (body) => {
        if (parse(schema, body) !== NOT_SURE) answered++;
        agreesWithZod(schema, body, parse);
      }),
      { numRuns: 3000 },
    );
    // the fast path did answer some of them: the comparison was not only ever "ask zod"
    expect(answered).toBeGreaterThan(100);
  });
});

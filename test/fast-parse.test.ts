// Validation's fast path (src/http/fast-parse.ts) must never change an answer: for any body, it
// either gives exactly zod's output (same values, same key order) or leaves the body to zod.
// Bodies are generated around valid requests of every operation, with fields dropped, replaced by
// awkward values (numbers, nulls, objects, JSON strings, patterns just off) and added.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { GATEWAY_HANDLERS } from "../src/server/app.js";
import { apmRequest, paymentRequest } from "../src/gateway/payment-schema.js";
import { compileFastParse, fastParse, NOT_SURE } from "../src/http/fast-parse.js";
import { around, awkward, VALID } from "./gateway-bodies.js";
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
  ...GATEWAY_HANDLERS.map((op): [string, z.ZodType, Record<string, unknown>[]] => [op.name, op.request, VALID[op.name]!]),
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
    fc.assert(
      fc.property(
        fc.constantFrom(...valid).chain((b) => around(b)),
        (body) => agreesWithZod(schema, body, parse),
      ),
      { numRuns: 400 },
    );
  });

  test("every kind of schema it compiles, against zod on generated values", () => {
    const schema = z
      .looseObject({
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
        told: z
          .string()
          .transform((s, ctx) => {
            if (s === "no") ctx.issues.push({ code: "custom", message: "no", input: s });
            return s.toUpperCase();
          })
          .optional(),
      })
      .refine((o) => o.name !== "zz", "not zz");
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

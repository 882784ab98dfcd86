// The shape of a scenario file, in one place: zod validates files at start and on reload (errors
// name file, path and reason), and scripts/scenario-schema.ts turns the same definition into the
// published JSON Schema (scenarios/scenario.schema.json) that editors use for completion.
import { z } from "zod";
import { GATEWAY_OPERATION_NAMES } from "../domain/gateway-operations.js";

/** Operation names a rule can match: the gateway's operations plus the sandbox's own events. */
export const RULE_OPERATIONS: readonly string[] = [...GATEWAY_OPERATION_NAMES, "apm", "recurring"];

const scalar = z.union([z.string(), z.number(), z.boolean()]);

const validRegex = z.string().refine((s) => {
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
}, "must be a valid regular expression");

const test = z
  .strictObject({
    equals: scalar.optional().describe("the value equals this"),
    in: z.array(scalar).optional().describe("the value is one of these"),
    not: z
      .union([scalar, z.array(scalar)])
      .optional()
      .describe("the value is not this (or none of these)"),
    prefix: z.string().optional().describe("the value starts with this"),
    suffix: z.string().optional().describe("the value ends with this"),
    regex: validRegex.optional().describe("the value matches this regular expression"),
    gt: z.number().optional().describe("numeric value greater than"),
    gte: z.number().optional().describe("numeric value at least"),
    lt: z.number().optional().describe("numeric value less than"),
    lte: z.number().optional().describe("numeric value at most"),
    cents: z
      .union([z.string().regex(/^\d{2}$/), z.array(z.string().regex(/^\d{2}$/))])
      .optional()
      .describe('the amount\'s cents, e.g. "51"'),
    present: z.boolean().optional().describe("the field is sent (non-empty) or not"),
  })
  .refine((o) => Object.keys(o).length > 0, "a test needs at least one of equals, in, not, prefix, suffix, regex, gt, gte, lt, lte, cents, present");

const condition = z.union([scalar, z.array(scalar), test]).describe("a value (equals), a list (one of), or a test object");

const whenSchema = z
  .record(z.string().min(1), condition)
  .describe(
    "All must hold. Keys: `operation` (name or list), `nth` (the nth call for the same order_no, 1-based: a number or a test), or a request field path with dots for nesting (batch operations: the order's own fields; payouts: e.g. beneficiary.bank_details.account_number). `<path>_cents` tests an amount's cents.",
  );

const latency = z.union([
  z.number().int().min(0).max(120_000),
  z.strictObject({ min: z.number().int().min(0), max: z.number().int().max(120_000) }).refine((r) => r.min <= r.max, "min must not exceed max"),
]);

/** A response field a rule sets: an XML element name in an authorise answer. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

const thenSchema = z.strictObject({
  continue: z
    .boolean()
    .optional()
    .describe("add this rule's effects (latency, notify, fields, ...) and keep looking: the next matching rule decides the outcome"),
  outcome: z.string().min(1).optional().describe("a named outcome of the operation from data/outcomes.json"),
  fields: z
    .record(z.string(), scalar)
    .superRefine((fields, ctx) => {
      for (const key of Object.keys(fields))
        if (!FIELD_NAME.test(key))
          ctx.addIssue({ code: "custom", path: [key], message: "a field name is letters, digits, _ . and - (it becomes an XML element)" });
    })
    .optional()
    .describe("response fields set directly (authorise XML children, batch order result fields, payout fields)"),
  status: z.number().int().min(200).max(599).optional().describe("HTTP status of the answer"),
  latency: latency.optional().describe("milliseconds to wait before answering: fixed, or {min, max}"),
  fault: z
    .enum(["hang", "reset", "malformed", "empty"])
    .optional()
    .describe("hang: never answer; reset: close the connection; malformed: a cut-off body; empty: an empty body"),
  process: z.boolean().optional().describe("with a fault or a 5xx status: whether the request still takes effect (default false)"),
  refund: z
    .strictObject({ after_seconds: z.number().min(0).optional(), result: z.enum(["processed", "failed"]).optional() })
    .optional()
    .describe("refunds: when an accepted refund settles, and how"),
  payout: z
    .strictObject({
      status: z.enum(["PENDING", "COMPLETED", "FAILED"]).optional(),
      failure_type: z.string().optional(),
      failure_reason: z.string().optional(),
      after_seconds: z.number().min(0).optional(),
      then: z.enum(["COMPLETED", "FAILED"]).optional(),
    })
    .optional()
    .describe("payouts: the status now, and for PENDING what happens after after_seconds"),
  notify: z
    .strictObject({
      delay_seconds: z.number().min(0).optional(),
      duplicate: z.number().int().min(0).max(10).optional(),
      drop: z.boolean().optional(),
    })
    .optional()
    .describe("notification behaviour for what this request causes"),
});

const ruleSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9_.-]+$/, "use letters, digits, _ . -"),
  replaces: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, "use letters, digits, _ . -")
    .optional()
    .describe("the id of a parent scenario's rule this one takes the place of (so it can say what it does under its own id)"),
  description: z.string().optional(),
  when: whenSchema,
  then: thenSchema,
});

export const scenarioFileSchema = z.strictObject({
  $schema: z.string().optional(),
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "lowercase letters, digits and dashes; must equal the file name"),
  description: z.string().min(1),
  extends: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe("scenario(s) whose rules follow this one's; a rule with the same id, or naming it in `replaces`, takes the parent rule's place"),
  rules: z.array(ruleSchema),
});

export type Condition = z.infer<typeof condition>;
export type When = z.infer<typeof whenSchema>;
export type Then = z.infer<typeof thenSchema>;
export type Rule = z.infer<typeof ruleSchema>;
export type ScenarioFile = z.infer<typeof scenarioFileSchema>;

/** A scenario with its `extends` chain resolved: the full ordered rule list. */
export interface Scenario {
  name: string;
  description: string;
  extends: string[];
  file: string;
  rules: (Rule & { from: string })[];
}

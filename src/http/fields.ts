// A request's fields checked at the edge: zod building blocks that accept what JSON and form
// bodies carry (numbers as strings, objects as JSON strings), and one function that turns zod's
// findings into a GatewayError naming each field. The bodies themselves: http/body.ts.
import { z } from "zod";
import { GatewayError, type FieldProblem } from "../domain/codes.js";
import { safeParse } from "./fast-parse.js";
import { MAX_DEPTH, nestingDepth } from "./body.js";

const asText = (v: unknown) => (typeof v === "number" || typeof v === "boolean" ? String(v) : v);
const asNumber = (v: unknown) => (typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v)) ? Number(v) : v);
const asJson = (v: unknown) => {
  if (typeof v !== "string") return v;
  const t = v.trim();
  if (!t.startsWith("{") && !t.startsWith("[")) return v;
  try {
    const parsed = JSON.parse(t) as unknown;
    return nestingDepth(parsed) > MAX_DEPTH ? v : parsed;
  } catch {
    return v;
  }
};

/** Top-level string and number fields as text: what scenario rules and the domain read of a payment request. */
export function scalarFields(body: Record<string, unknown>): Record<string, string> {
  // the whole object copied at once (V8 clones its shape, where adding key by key rebuilt it), then
  // the values that are not text put right: usually none
  const out: Record<string, unknown> = { ...body };
  // an own "__proto__" (JSON.parse makes one) was never a field
  if (Object.hasOwn(out, "__proto__")) delete out["__proto__"];
  for (const k in out) {
    const v = out[k];
    if (typeof v === "number") out[k] = String(v);
    else if (typeof v !== "string") delete out[k];
  }
  return out as Record<string, string>;
}

/** An optional string field; numbers are accepted and turned into strings. */
export const str = () => z.preprocess(asText, z.string({ error: "must be a string" })).optional();
/** A required, non-empty string field. */
export const required = () =>
  z.preprocess(asText, z.string({ error: (i) => (i.input === undefined ? "is required" : "must be a string") }).min(1, "is required"));
/** An optional string that, when present and non-empty, matches a pattern. */
export const pattern = (re: RegExp, message: string) =>
  z
    .preprocess(
      asText,
      z.string({ error: "must be a string" }).refine((s) => s === "" || re.test(s), message),
    )
    .optional();
export const int = () => z.preprocess(asNumber, z.number({ error: "must be an integer" }).int("must be an integer")).optional();
export const num = () => z.preprocess(asNumber, z.number({ error: "must be a number" })).optional();
/**
 * The longest identifier Sandgate takes (merchant_id, account_id, order_no, transaction_id,
 * recurring_id, token_id): the interface's samples are 6 to 36 characters. A longer one is refused
 * before anything is looked up or provisioned, so no id can make a record large.
 */
export const ID_MAX = 64;
export const ID_MESSAGE = `must be at most ${ID_MAX} characters`;
const shortEnough = (s: string) => s.length <= ID_MAX;
/** A required identifier: non-empty, at most ID_MAX characters. */
export const requiredId = () => required().refine(shortEnough, ID_MESSAGE);
/** An optional identifier, at most ID_MAX characters. */
export const optionalId = () => z.preprocess(asText, z.string({ error: "must be a string" }).refine(shortEnough, ID_MESSAGE)).optional();

/** The fields every operation's body carries (checked by the operation pipeline), with the operation's own. */
export const withEnvelope = <T extends z.ZodRawShape>(shape: T) =>
  obj({ merchant_id: requiredId(), account_id: requiredId(), encryption_data: required().describe("the request's signature (see Signatures)"), ...shape });

/** An object or array field; a form body may carry it as a JSON string. */
export const json = <T extends z.ZodType>(schema: T) => z.preprocess(asJson, schema).optional();
export const obj = <T extends z.ZodRawShape>(shape: T) => z.looseObject(shape, { error: "must be an object" });
export const list = <T extends z.ZodType>(item: T) => z.array(item, { error: "must be an array" });

export const DECIMAL = /^\d{1,12}(\.\d{1,2})?$/;
export const CURRENCY = /^[A-Za-z]{3}$/;
const COUNTRY = /^[A-Za-z]{2}$/;
const isPositiveAmount = (s: string) => DECIMAL.test(s) && Number(s) > 0;

export const decimal = () => pattern(DECIMAL, "must be a decimal amount such as 10.00");
export const country = () => pattern(COUNTRY, "must be a two-letter country code");
export const currency = () => pattern(CURRENCY, "must be a three-letter currency code");

/** A required field that, once present, must pass a check; an empty value is reported once, as missing. */
export const requiredMatching = (check: RegExp | ((s: string) => boolean), message: string) =>
  required().refine((s) => s === "" || (check instanceof RegExp ? check.test(s) : check(s)), message);
export const requiredCurrency = () => requiredMatching(CURRENCY, "must be a three-letter currency code");
export const requiredCountry = () => requiredMatching(COUNTRY, "must be a two-letter country code");
export const requiredDecimal = () => requiredMatching(DECIMAL, "must be a decimal amount such as 10.00");
export const requiredPositiveAmount = () => requiredMatching(isPositiveAmount, "must be a positive decimal amount such as 10.00");
/** An optional positive amount (when sent). */
export const positiveAmount = () => pattern(/^(?!0+(\.0{1,2})?$)\d{1,12}(\.\d{1,2})?$/, "must be a positive decimal amount such as 10.00");
export const url = () => pattern(/^https?:\/\/[^\s]+$/i, "must be an absolute http(s) address");
export const email = () => pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, "must be an email address");

function fieldPath(path: PropertyKey[]): string {
  return path.reduce<string>((acc, part) => (typeof part === "number" ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part)), "");
}

/**
 * Parses the body with the schema, or throws one GatewayError listing every bad field, together
 * with `more`: problems found by checks the schema cannot express (e.g. card or token_id).
 */
export function validate<T extends z.ZodType>(schema: T, body: unknown, more: FieldProblem[] = []): z.output<T> {
  const parsed = more.length === 0 ? safeParse(schema, body) : schema.safeParse(body);
  if (parsed.success && more.length === 0) return parsed.data;
  const found: FieldProblem[] = parsed.success ? [] : parsed.error.issues.map((i) => ({ field: fieldPath(i.path), message: i.message }));
  return fail([...found, ...more]);
}

export function fail(problems: FieldProblem[]): never {
  const anyMissing = problems.some((p) => p.message.startsWith("is required"));
  const summary = problems.map((p) => `${p.field} ${p.message}`).join("; ");
  throw new GatewayError(anyMissing ? "missing_field" : "invalid_field", summary, problems);
}

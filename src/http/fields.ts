// A request's fields, from its body to checked values. Below: the bodies as the gateway's clients
// send them (JSON, forms). First, validation at the edge: zod building blocks that accept what JSON and form bodies carry
// (numbers as strings, objects as JSON strings), and one function that turns zod's findings
// into a GatewayError naming each field.
import { z } from "zod";
import { GatewayError, type FieldProblem } from "../domain/codes.js";
import { safeParse } from "./fast-parse.js";
import qs from "qs";

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

// Request bodies as the gateway's clients send them: JSON, form-urlencoded (bracket nesting
// allowed), and a JSON document sent with a form content type (the interface document's samples do that).
// Anything else is a GatewayError that the operation renders in its own format. Plain text in,
// plain data out: the bytes are read off the socket by gateway-server.ts.
export type Body = Record<string, unknown>;

const decoder = new TextDecoder("utf-8", { fatal: true });

/** The body's bytes as text: UTF-8, nothing else. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes);
  } catch {
    throw new GatewayError("malformed_body", "the body is not valid UTF-8");
  }
}

/** The body's text as an object; a value carrying control characters is refused (XML could not carry it faithfully). */
export function parseText(text: string, contentType: string): Body {
  const body = parseBodyText(text, contentType);
  // JSON strings and form keys and values are the text's own characters but for escapes (JSON's \,
  // a form's %): a text with neither and no such character has none in any value (the common case,
  // which then costs one pass of a regular expression instead of one per key and value)
  if (!MAYBE_CONTROL_OR_ESCAPE.test(text)) return body;
  const parts: (string | number)[] = [];
  if (holdsControlCharacter(body, parts)) {
    const path = pathOf(parts);
    throw new GatewayError("invalid_field", `${path} contains control characters`, [{ field: path, message: "must not contain control characters" }]);
  }
  return body;
}

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Any character CONTROL might be about: one class, cheap enough to test every value with first. */
// eslint-disable-next-line no-control-regex -- as above
const MAYBE_CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uD800-\uDFFF\uFFFE\uFFFF]/;
const CONTROLS = new RegExp(CONTROL.source, "g");
const hasControl = (s: string) => MAYBE_CONTROL.test(s) && CONTROL.test(s);
/** MAYBE_CONTROL's class with the escapes' first characters added: JSON's \ (\u0001) and a form's % (%01) */
const MAYBE_CONTROL_OR_ESCAPE = new RegExp(`[\\\\%${MAYBE_CONTROL.source.slice(1)}`);

/**
 * Whether a string value (or a key) holds a control character; if so, `parts` receives the path to
 * it, innermost first (a number for an array index). Built only when found: a clean body costs no strings.
 */
function holdsControlCharacter(value: unknown, parts: (string | number)[]): boolean {
  if (typeof value === "string") return hasControl(value);
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (holdsControlCharacter(value[i], parts)) return parts.push(i) > 0;
    }
    return false;
  }
  for (const key in value) {
    if (hasControl(key) || holdsControlCharacter((value as Record<string, unknown>)[key], parts)) return parts.push(key) > 0;
  }
  return false;
}

/**
 * ["b", 0, "a"] → "a[0].b"; a bare string body is "(body)". A key's own control characters are
 * written as \uXXXX: the path is echoed in the answer, and XML cannot carry them.
 */
function pathOf(innermostFirst: (string | number)[]): string {
  let path = "";
  for (let i = innermostFirst.length - 1; i >= 0; i--) {
    const part = innermostFirst[i]!;
    if (typeof part === "number") {
      path += `[${part}]`;
      continue;
    }
    const key = part.replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    path += path === "" ? key : `.${key}`;
  }
  return path || "(body)";
}

function parseBodyText(text: string, contentType: string): Body {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  const trimmed = text.trim();
  if (trimmed === "") return {};
  if (type === "application/json" || type.endsWith("+json")) return parseJson(trimmed);
  if (type === "application/x-www-form-urlencoded") {
    return looksLikeJson(trimmed) ? parseJson(trimmed) : parseForm(text);
  }
  if (type === "multipart/form-data") {
    throw new GatewayError("unsupported_body", "multipart/form-data is not accepted: send JSON or application/x-www-form-urlencoded");
  }
  // No or another content type: accept what is unmistakably JSON or a form, refuse the rest.
  if (looksLikeJson(trimmed)) return parseJson(trimmed);
  if (/^[^=&\s]+=[^\s]*$/.test(trimmed)) return parseForm(trimmed);
  throw new GatewayError("unsupported_body", `the body is neither JSON nor application/x-www-form-urlencoded (content type "${type || "none"}")`);
}

function looksLikeJson(text: string): boolean {
  return text.startsWith("{") || text.startsWith("[");
}

function parseJson(text: string): Body {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new GatewayError("malformed_body", `the body is not valid JSON (${(err as Error).message})`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new GatewayError("malformed_body", "the JSON body must be an object with the operation's fields");
  }
  if (!bracketsAtMost(text, MAX_DEPTH) && nestingDepth(value) > MAX_DEPTH) {
    throw new GatewayError("malformed_body", `the JSON body is nested deeper than ${MAX_DEPTH} levels`);
  }
  return value as Body;
}

/** No gateway request nests deeper than a few levels; anything beyond this is refused up front. */
export const MAX_DEPTH = 32;

/** Whether the text holds at most `limit` of "{" and "[" together: its JSON cannot nest deeper than that. */
function bracketsAtMost(text: string, limit: number): boolean {
  let count = 0;
  for (const bracket of ["{", "["]) {
    for (let at = text.indexOf(bracket); at >= 0; at = text.indexOf(bracket, at + 1)) if (++count > limit) return false;
  }
  return true;
}

/** How deep objects and arrays nest (counting stops past MAX_DEPTH, so no input can overflow the stack). */
export function nestingDepth(root: unknown): number {
  return depthBelow(root, 0);
}

function depthBelow(value: unknown, depth: number): number {
  if (value === null || typeof value !== "object") return depth;
  const here = depth + 1;
  if (here > MAX_DEPTH) return here;
  let max = here;
  const children: unknown[] = Array.isArray(value) ? value : Object.values(value);
  for (let i = 0; i < children.length && max <= MAX_DEPTH; i++) max = Math.max(max, depthBelow(children[i], here));
  return max;
}

const FORM_PARAMETER_LIMIT = 5000;

function parseForm(text: string): Body {
  // qs would silently drop what is past its limit; refuse instead
  const parameters = text.split("&").length;
  if (parameters > FORM_PARAMETER_LIMIT) {
    throw new GatewayError("malformed_body", `the form has ${parameters} parameters; at most ${FORM_PARAMETER_LIMIT} are read`);
  }
  return qs.parse(text, { depth: 8, arrayLimit: 1000, parameterLimit: FORM_PARAMETER_LIMIT, allowPrototypes: false }) as Body;
}

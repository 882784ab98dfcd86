// Request bodies as the gateway's clients send them: JSON, form-urlencoded (bracket nesting
// allowed), and a JSON document sent with a form content type (the interface document's samples do that).
// Anything else is a GatewayError that the operation renders in its own format. Plain text in,
// plain data out: the bytes are read off the socket by gateway-server.ts.
import qs from "qs";
import { GatewayError } from "../domain/codes.js";

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

// Request bodies as the gateway's clients send them: JSON, form-urlencoded (bracket nesting
// allowed), and a JSON document sent with a form content type (the seed's samples do that).
// Anything else is a GatewayError that the operation renders in its own format.
import type { Request, Response } from "express";
import bodyParser from "body-parser";
import qs from "qs";
import { GatewayError } from "../codes.js";

export type Body = Record<string, unknown>;

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Reads the raw bytes with body-parser (limit → 413) and turns them into a plain object. */
export function createBodyReader(limit: string) {
  const raw = bodyParser.raw({ type: () => true, limit });
  return (req: Request, res: Response): Promise<Body> =>
    new Promise<Body>((resolve, reject) => {
      raw(req, res, (err?: unknown) => {
        if (err) return reject(translateParserError(err, limit));
        try {
          const bytes = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
          resolve(parseBody(bytes, req.get("content-type") ?? ""));
        } catch (e) {
          reject(e);
        }
      });
    });
}

function translateParserError(err: unknown, limit: string): GatewayError {
  const type = (err as { type?: string }).type;
  if (type === "entity.too.large") return new GatewayError("body_too_large", `the limit is ${limit}`);
  if (type === "encoding.unsupported") return new GatewayError("unsupported_body", "Content-Encoding must be identity, gzip, deflate or br");
  if (type === "charset.unsupported") return new GatewayError("unsupported_body", "only utf-8 bodies are accepted");
  return new GatewayError("malformed_body", "the request body could not be read");
}

/** The body as an object; a value carrying control characters is refused (XML could not carry it faithfully). */
export function parseBody(bytes: Buffer, contentType: string): Body {
  const body = parseBodyText(bytes, contentType);
  const path = controlCharacterPath(body, "");
  if (path) {
    throw new GatewayError("invalid_field", `${path} contains control characters`, [{ field: path, message: "must not contain control characters" }]);
  }
  return body;
}

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The path of the first string value (or key) that holds a control character, if any. */
function controlCharacterPath(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return CONTROL.test(value) ? path || "(body)" : undefined;
  if (value === null || typeof value !== "object") return undefined;
  for (const [key, child] of Object.entries(value)) {
    const childPath = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (CONTROL.test(key)) return childPath;
    const found = controlCharacterPath(child, childPath);
    if (found) return found;
  }
  return undefined;
}

function parseBodyText(bytes: Buffer, contentType: string): Body {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new GatewayError("malformed_body", "the body is not valid UTF-8");
  }
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
  throw new GatewayError(
    "unsupported_body",
    `the body is neither JSON nor application/x-www-form-urlencoded (content type "${type || "none"}")`,
  );
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
  if (nestingDepth(value) > MAX_DEPTH) {
    throw new GatewayError("malformed_body", `the JSON body is nested deeper than ${MAX_DEPTH} levels`);
  }
  return value as Body;
}

/** No gateway request nests deeper than a few levels; anything beyond this is refused up front. */
export const MAX_DEPTH = 32;

/** How deep objects and arrays nest (walked with a stack, so no input can overflow it). */
export function nestingDepth(root: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== "object") continue;
    max = Math.max(max, depth + 1);
    if (max > MAX_DEPTH) return max;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
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

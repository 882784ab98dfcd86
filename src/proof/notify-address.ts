// With --notify-to, the recorder stands between the gateway and the merchant's notify URL: a
// forwarded request's top-level notify_url is replaced by the recorder's own address, and every
// other byte of the body is kept as the merchant sent it (JSON, whatever its content type, or a form).
import type { IncomingMessage } from "node:http";

/**
 * The body with a top-level notify_url pointing at the recorder (JSON, whatever its content type,
 * or a form); every other byte as sent. The same buffer when there is none.
 */
export function pointNotifyUrlAt(body: Buffer, headers: IncomingMessage["headers"], address: string): Buffer {
  const encoding = headers["content-encoding"];
  if (body.length === 0 || (encoding !== undefined && encoding !== "identity")) return body;
  const text = body.toString("utf8");
  const start = text.trimStart();
  let rewritten: string | undefined;
  if (start.startsWith("{")) rewritten = replaceJsonField(text, "notify_url", address);
  else if (/x-www-form-urlencoded/i.test(headers["content-type"] ?? "")) rewritten = replaceFormField(text, "notify_url", address);
  return rewritten === undefined ? body : Buffer.from(rewritten, "utf8");
}

/** The form with every `field=` pair's value replaced; undefined when there is none. */
function replaceFormField(text: string, field: string, value: string): string | undefined {
  let found = false;
  const pairs = text.split("&").map((pair) => {
    const eq = pair.indexOf("=");
    const rawKey = eq < 0 ? pair : pair.slice(0, eq);
    let key: string;
    try {
      key = decodeURIComponent(rawKey.replace(/\+/g, " "));
    } catch {
      return pair;
    }
    if (key !== field) return pair;
    found = true;
    return `${rawKey}=${encodeURIComponent(value)}`;
  });
  return found ? pairs.join("&") : undefined;
}

/** The end (index after) of the JSON string starting at `i`. */
function stringEnd(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length) {
    if (text[j] === "\\") j += 2;
    else if (text[j] === '"') return j + 1;
    else j++;
  }
  return j;
}

const skipSpace = (text: string, i: number) => {
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
};

/** The end (index after) of the JSON value starting at `i`. */
function valueEnd(text: string, i: number): number {
  if (text[i] === '"') return stringEnd(text, i);
  if (text[i] === "{" || text[i] === "[") {
    let depth = 0;
    let j = i;
    while (j < text.length) {
      const c = text[j];
      if (c === '"') {
        j = stringEnd(text, j);
        continue;
      }
      if (c === "{" || c === "[") depth++;
      else if ((c === "}" || c === "]") && --depth === 0) return j + 1;
      j++;
    }
    return j;
  }
  let j = i;
  while (j < text.length && !/[\s,}\]]/.test(text[j]!)) j++;
  return j;
}

/**
 * The JSON object's text with the value of its top-level `field` replaced by a string, every other
 * byte kept (numbers stay as written); undefined when the text is not an object with that field.
 */
function replaceJsonField(text: string, field: string, value: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed) || !Object.hasOwn(parsed, field)) return undefined;
  } catch {
    return undefined;
  }
  let out = "";
  let copied = 0;
  let depth = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      const colon = skipSpace(text, end);
      if (depth === 1 && text[colon] === ":" && JSON.parse(text.slice(i, end)) === field) {
        const start = skipSpace(text, colon + 1);
        const stop = valueEnd(text, start);
        out += `${text.slice(copied, start)}${JSON.stringify(value)}`;
        copied = stop;
        i = stop;
      } else i = end;
      continue;
    }
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    i++;
  }
  return out + text.slice(copied);
}

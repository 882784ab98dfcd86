// What the recorder writes to a HAR instead of card data and secrets. Pure functions over values,
// JSON, forms, query strings, URLs, XML and HTML; each returns its input unchanged (the same
// string) when there is nothing to mask, so a recording of a harmless exchange holds its bytes.
// Only the HAR is masked: what the recorder forwards is never touched.
import { maskCard, passesLuhn } from "../domain/card.js";

const CARD_NAME = /^(card|card_?no|card_?number|cardnumber|pan)$/i;
const SECURITY_CODE_NAME = /^(security_code|cvv2?|cvc|csc)$/i;
/** key-, password- and secret-like names: `key`, `api_key`, `x-api-key`, `merchant_secret`, `apiKey`, `clientSecret` */
const SECRET_NAME = /(^|[_-])(key|api_?key|secret|secret_?key|password|passwd|pwd)$/i;
const SECRET_NAME_CAMEL = /[a-z0-9](Key|Secret|SecretKey|Password|Passwd|Pwd)$/;
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key)$/i;
/** identifiers that may well be 13–19 digits passing Luhn by chance (transaction_id, order_no, refund_reference) */
const IDENTIFIER_NAME = /(id|_no|reference)$/i;
const IDENTIFIER_NAME_CAMEL = /[a-z0-9]No$/;
/** times and dates: refund_date, transaction_date, checkout_time, created_at, ... */
const TIME_NAME = /(date|time|_at|timestamp|created|updated)$/i;
/** YYYYMMDDhhmmss (14 digits, like a Diners card) and epoch milliseconds (13, no card starts with 1 at that length) */
const TIMESTAMP = /^((19|20)\d\d(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])([01]\d|2[0-3])[0-5]\d[0-5]\d|1\d{12})$/;

export const SECRET_MASK = "***";

export const isCardName = (name: string) => CARD_NAME.test(name);
export const isSecurityCodeName = (name: string) => SECURITY_CODE_NAME.test(name);
export const isSecretName = (name: string) => SECRET_NAME.test(name) || SECRET_NAME_CAMEL.test(name);

/**
 * A card number as the gateway shows it: first six, `*` for the middle, last four (verify replays
 * it as the test card with the same first six and last four). A value already masked stays as it is.
 */
export function maskCardNumber(value: string): string {
  if (value.includes("*")) return value;
  const digits = value.replace(/[\s-]/g, "");
  return maskCard(digits);
}

const looksLikeCard = (value: string) => /^\d{13,19}$/.test(value) && passesLuhn(value);
/** where a Luhn-valid run of digits is something else: an identifier or a time */
const isNotACard = (name: string, value: string) => IDENTIFIER_NAME.test(name) || IDENTIFIER_NAME_CAMEL.test(name) || TIME_NAME.test(name) || TIMESTAMP.test(value);

/**
 * One named value as it may be written. A value that is itself a JSON text, a URL or a query
 * string (`allParams`, `cookie_new`, a return address) is masked inside.
 */
export function maskValue(name: string, value: string): string {
  if (value === "") return value;
  if (isCardName(name)) return maskCardNumber(value);
  if (isSecurityCodeName(name)) return "*".repeat(value.length);
  if (isSecretName(name)) return SECRET_MASK;
  if (looksLikeCard(value)) return isNotACard(name, value) ? value : maskCard(value);
  if (/^\s*[[{]/.test(value)) return maskJsonText(value) ?? value;
  if (/^https?:\/\//i.test(value)) return maskUrl(value);
  if (/^[^=&\s]+=[^&]*(&|$)/.test(value)) return maskForm(value);
  return value;
}

/** A JSON value with every field masked, however deep; `name` is the key it sits under. The same value (not a copy) when nothing was masked. */
export function maskJson(value: unknown, name = ""): unknown {
  if (typeof value === "string") return maskValue(name, value);
  if (typeof value === "number" || typeof value === "bigint") {
    const text = String(value);
    const masked = maskValue(name, text);
    return masked === text ? value : masked;
  }
  if (Array.isArray(value)) {
    // [["card", "4242…"], ["security_code", "123"]]: name/value pairs (the checkout page's inputs)
    if (value.length === 2 && typeof value[0] === "string" && (typeof value[1] === "string" || typeof value[1] === "number")) {
      const pairValue = maskJson(value[1], value[0]);
      if (pairValue !== value[1]) return [value[0], pairValue];
    }
    const items = value.map((v) => maskJson(v, name));
    return items.some((v, i) => v !== value[i]) ? items : value;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    const masked = entries.map(([k, v]) => maskJson(v, k));
    return masked.some((v, i) => v !== entries[i]![1]) ? Object.fromEntries(entries.map(([k], i) => [k, masked[i]])) : value;
  }
  return value;
}

/** A JSON text masked; the same text when nothing was masked; undefined when it is not JSON. */
export function maskJsonText(text: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const masked = maskJson(parsed);
  return masked === parsed ? text : JSON.stringify(masked);
}

/** The name a form key stands for: `subscription[card]` is a `card`, `cards[0]` a `cards`. */
export function fieldName(key: string): string {
  const segments = [...key.matchAll(/\[([^\]]*)\]/g)].map((m) => m[1]!).filter((s) => s !== "" && !/^\d+$/.test(s));
  return segments.at(-1) ?? key.replace(/\[.*$/, "");
}

const decodeFormPart = (part: string) => {
  try {
    return decodeURIComponent(part.replace(/\+/g, " "));
  } catch {
    return undefined;
  }
};

/** A form body or query string (without `?`), pairs in their order; untouched pairs keep their bytes. */
export function maskForm(text: string): string {
  let changed = false;
  const pairs = text.split("&").map((pair) => {
    const eq = pair.indexOf("=");
    if (eq < 0) return pair;
    const key = decodeFormPart(pair.slice(0, eq));
    const value = decodeFormPart(pair.slice(eq + 1));
    if (key === undefined || value === undefined) return pair;
    const masked = maskValue(fieldName(key), value);
    if (masked === value) return pair;
    changed = true;
    return `${pair.slice(0, eq)}=${encodeURIComponent(masked)}`;
  });
  return changed ? pairs.join("&") : text;
}

/** HAR's queryString (or any name/value list), masked. */
export function maskPairs(pairs: readonly { name: string; value: string }[]): { name: string; value: string }[] {
  return pairs.map(({ name, value }) => ({ name, value: maskValue(fieldName(name), value) }));
}

/** A URL (absolute or a path) with its query masked. */
export function maskUrl(url: string): string {
  const q = url.indexOf("?");
  if (q < 0) return url;
  const hash = url.indexOf("#", q);
  const end = hash < 0 ? url.length : hash;
  const query = url.slice(q + 1, end);
  const masked = maskForm(query);
  return masked === query ? url : `${url.slice(0, q + 1)}${masked}${url.slice(end)}`;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[ref.toLowerCase()] ?? whole;
  });
}
const escapeMarkup = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** XML: the text of every element without children (`<card>…</card>`), by the element's name. */
export function maskXml(text: string): string {
  return text.replace(/<([A-Za-z_][\w.:-]*)(\s[^>]*)?>([^<]*)<\/\1\s*>/g, (whole, name: string, attrs: string | undefined, inner: string) => {
    const value = decodeEntities(inner);
    const masked = maskValue(name.replace(/^.*:/, ""), value);
    return masked === value ? whole : `<${name}${attrs ?? ""}>${escapeMarkup(masked)}</${name}>`;
  });
}

const ATTRIBUTE = (attr: string) => new RegExp(`(\\s${attr}\\s*=\\s*)("([^"]*)"|'([^']*)'|([^\\s>"']+))`, "i");

/** JSON placed in a <script> block, as the checkout page's inputs are. */
const jsonForScript = (text: string) =>
  text.replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");

/** HTML: `<input name=… value=…>` values by their name, and JSON data blocks (`<script type="application/json">`). */
export function maskHtml(text: string): string {
  const inputs = text.replace(/<input\b[^>]*>/gi, (tag) => {
    const nameMatch = ATTRIBUTE("name").exec(tag);
    const valueMatch = ATTRIBUTE("value").exec(tag);
    if (!nameMatch || !valueMatch) return tag;
    const name = decodeEntities(nameMatch[3] ?? nameMatch[4] ?? nameMatch[5] ?? "");
    const value = decodeEntities(valueMatch[3] ?? valueMatch[4] ?? valueMatch[5] ?? "");
    const masked = maskValue(name, value);
    if (masked === value) return tag;
    return tag.replace(ATTRIBUTE("value"), (_all, prefix: string) => `${prefix}"${escapeMarkup(masked)}"`);
  });
  return inputs.replace(/(<script\b[^>]*\btype\s*=\s*["']?application\/(?:ld\+)?json["']?[^>]*>)([\s\S]*?)(<\/script\s*>)/gi, (whole, open: string, json: string, close: string) => {
    const masked = maskJsonText(json);
    return masked === undefined || masked === json ? whole : `${open}${jsonForScript(masked)}${close}`;
  });
}

/**
 * A body's text by what it holds: JSON (whatever its content type says: the gateway's samples send
 * JSON as a form), a form, XML or HTML. Other texts are written as they are.
 */
export function maskBody(text: string, contentType: string): string {
  const start = text.trimStart();
  if (start.startsWith("{") || start.startsWith("[")) {
    const json = maskJsonText(text);
    if (json !== undefined) return json;
  }
  if (/x-www-form-urlencoded/i.test(contentType)) return maskForm(text);
  if (/html/i.test(contentType) || /^<!doctype html|^<html/i.test(start)) return maskHtml(text);
  if (/xml/i.test(contentType) || start.startsWith("<")) return maskXml(text);
  if (contentType === "" && /^[^=&\s]+=/.test(start)) return maskForm(text);
  return text;
}

/** A header's value as it may be written: credentials never, a Location's query masked. */
export function maskHeader(name: string, value: string): string {
  if (SECRET_HEADER.test(name) || isSecretName(name)) return SECRET_MASK;
  if (/^(location|content-location|referer)$/i.test(name)) return maskUrl(value);
  return maskValue(name, value);
}

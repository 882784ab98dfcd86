// The one masking of card data and secrets, for every place Sandgate keeps or shows a request: the
// request log (in memory, in Redis), its HAR export, notifications, the recorder's HAR, and free-text
// fields before a payment is stored. Pure functions over values, JSON, forms, query strings, URLs,
// XML and HTML; each returns its input unchanged (the same string or object) when there is nothing
// to mask, so a harmless exchange keeps its bytes. Any value under a card or security-code name is
// masked whatever its shape (string, number, array, object, nested; a form's card[] or card[number]);
// a Luhn-valid run of 13 to 19 digits (spaces or dashes between them allowed) in any other field of a
// request (a name, an address, a note, an item's name) becomes its first six and last four, but in
// identifiers, times and bank details (kept as sent). What the recorder forwards is never touched.

import { maskCard, passesLuhn } from "./card-numbers.js";

// names as sets (looked up lower-cased): every request the gateway takes is walked with them
const CARD_NAMES = new Set(["card", "cardno", "card_no", "cardnumber", "card_number", "pan"]);
const SECURITY_CODE_NAMES = new Set(["security_code", "cvv", "cvv2", "cvc", "csc"]);
/** key-, password- and secret-like names: `key`, `api_key`, `x-api-key`, `merchant_secret`, `apiKey`, `clientSecret` */
const SECRET_NAME = /(^|[_-])(key|api_?key|secret|secret_?key|password|passwd|pwd)$/i;
const SECRET_NAME_CAMEL = /[a-z0-9](Key|Secret|SecretKey|Password|Passwd|Pwd)$/;
export const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key)$/i;
/** identifiers that may well be 13–19 digits passing Luhn by chance (transaction_id, order_no, refund_reference) */
const IDENTIFIER_NAME = /(id|_no|reference)$/i;
const IDENTIFIER_NAME_CAMEL = /[a-z0-9]No$/;
/** times and dates: refund_date, transaction_date, checkout_time, created_at, ... */
const TIME_NAME = /(date|time|_at|timestamp|created|updated)$/i;
/** YYYYMMDDhhmmss (14 digits, like a Diners card) and epoch milliseconds (13, no card starts with 1 at that length) */
const TIMESTAMP = /^((19|20)\d\d(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])([01]\d|2[0-3])[0-5]\d[0-5]\d|1\d{12})$/;

export const SECRET_MASK = "***";

/** Free-text fields: where a payer or merchant may type anything, a card number included. */
const FREE_TEXT_NAMES = new Set([
  "note",
  "notes",
  "custom",
  "comment",
  "comments",
  "description",
  "memo",
  "remark",
  "remarks",
  "message",
  "additional_information",
  "labels",
]);
const isFreeText = (name: string) => FREE_TEXT_NAMES.has(name.toLowerCase());

/** What a name holds, from any of its parts: `card`, `card[]`, `card[number]`, `payment[card]` are cards. */
type Sensitive = "card" | "code" | undefined;
function sensitiveName(name: string): Sensitive {
  const lower = name.toLowerCase();
  if (CARD_NAMES.has(lower)) return "card";
  if (SECURITY_CODE_NAMES.has(lower)) return "code";
  if (!name.includes("[")) return undefined;
  const parts = lower.split(/[[\]]+/).filter((p) => p !== "");
  if (parts.some((p) => CARD_NAMES.has(p))) return "card";
  if (parts.some((p) => SECURITY_CODE_NAMES.has(p))) return "code";
  return undefined;
}

export const isSecretName = (name: string) => SECRET_NAME.test(name) || SECRET_NAME_CAMEL.test(name);

/**
 * A card number as the gateway shows it: first six, `*` for the middle, last four (verify replays
 * it as the test card with the same first six and last four). A value already masked stays as it is.
 */
function maskCardNumber(value: string): string {
  if (value.includes("*")) return value;
  const digits = value.replace(/[\s-]/g, "");
  return maskCard(digits);
}

const looksLikeCard = (value: string) => /^\d{13,19}$/.test(value) && passesLuhn(value);
/** where a Luhn-valid run of digits is something else: an identifier or a time */
const isNotACard = (name: string, value: string) =>
  IDENTIFIER_NAME.test(name) || IDENTIFIER_NAME_CAMEL.test(name) || TIME_NAME.test(name) || TIMESTAMP.test(value);

/**
 * One named value as it may be written. A value that is itself a JSON text, a URL or a query
 * string (`allParams`, `cookie_new`, a return address) is masked inside.
 */
export function maskValue(name: string, value: string): string {
  if (value === "") return value;
  const sensitive = sensitiveName(name);
  if (sensitive === "card") return maskCardNumber(value);
  if (sensitive === "code") return "*".repeat(value.length);
  name = fieldName(name);
  if (isSecretName(name)) return SECRET_MASK;
  if (looksLikeCard(value)) return isNotACard(name, value) ? value : maskCard(value);
  if (isFreeText(name)) return maskCardRuns(value);
  if (/^\s*[[{]/.test(value)) return maskJsonText(value) ?? value;
  if (/^https?:\/\//i.test(value)) return maskUrl(value);
  if (/^[^=&\s]+=[^&]*(&|$)/.test(value)) return maskForm(value);
  return value;
}

/** Digit runs (single spaces or dashes between digits allowed); linear: each step takes a digit. */
const DIGIT_RUN = /\d(?:[ -]?\d)*/g;

/** A free text with every Luhn-valid run of 13 to 19 digits shown as first six and last four. */
function maskCardRuns(text: string): string {
  if (!/\d{4}/.test(text.replace(/[ -]/g, ""))) return text;
  return text.replace(DIGIT_RUN, (run) => {
    const digits = run.replace(/[ -]/g, "");
    return digits.length >= 13 && digits.length <= 19 && passesLuhn(digits) ? maskCard(digits) : run;
  });
}

/** A card or security-code name in a request's text: the request log masks its value whatever it is. */
const MAY_HOLD = new RegExp([...CARD_NAMES, ...SECURITY_CODE_NAMES].join("|"), "i");

/**
 * Names whose values Sandgate keeps as sent, whatever digits they hold: identifiers (transaction_id,
 * order_no, refund_reference: one in ten random 16-digit ids passes Luhn, and each is looked up by
 * its value), times, and bank details (account_number, iban: a payout's, not a card).
 */
const BANK_DETAIL = /(number|iban)$/i;
const keptAsSent = (name: string) => IDENTIFIER_NAME.test(name) || IDENTIFIER_NAME_CAMEL.test(name) || TIME_NAME.test(name) || BANK_DETAIL.test(name);

/** What a name is to the request log's masking: a card, a security code, text a card number may be typed into, or kept as sent (null). */
type LoggedKind = Sensitive | "free" | null;
const kinds = new Map<string, LoggedKind>();
function kindOf(name: string): LoggedKind {
  let kind = kinds.get(name);
  if (kind === undefined) {
    const field = fieldName(name);
    kind = sensitiveName(name) ?? (field !== "" && keptAsSent(field) ? null : "free");
    if (kinds.size < 10_000) kinds.set(name, kind); // names come from requests: the cache stays bounded
  }
  return kind;
}

/** A value a card number may be typed into, with every Luhn-valid run of 13–19 digits masked (a whole timestamp kept). */
const freeValue = (value: string) => (value.length < 13 || !LONG_RUN.test(value) || TIMESTAMP.test(value) ? value : maskCardRuns(value));
/** 13 digits or more, single spaces or dashes between them allowed: what may be a card number */
const LONG_RUN = /\d(?:[ -]?\d){12}/;

/** What the request log masks of a value: anything under a card or security-code name, card numbers in any other text. */
function loggedValue(name: string, value: string): string {
  const kind = kindOf(name);
  if (kind === "card") return maskCardNumber(value);
  if (kind === "code") return "*".repeat(value.length);
  return kind === "free" ? freeValue(value) : value;
}

/** How a walk masks, and what it saw on the way. */
interface Walk {
  /** card numbers in free text only (cards and codes left as they are, for the operation to decide with) */
  freeOnly: boolean;
  /**
   * set when a free-text value was masked, or when a card or code holds an object or array (whose
   * free text only a freeOnly walk reaches): until then, a freeOnly walk of the same value masks nothing
   */
  freeMasked: boolean;
}
const newWalk = (freeOnly = false): Walk => ({ freeOnly, freeMasked: false });

/**
 * A parsed JSON body as the request log keeps it (or, `freeOnly`, with card numbers in free text
 * masked only); the same value when nothing is masked. One pass, a copy only of what changes.
 */
function loggedJson(value: unknown, kind: LoggedKind, walk: Walk): unknown {
  if (typeof value === "string" || typeof value === "number") {
    if (kind === "card") return maskCardNumber(String(value));
    if (kind === "code") return "*".repeat(String(value).length);
    if (kind !== "free" || typeof value !== "string") return value;
    const masked = freeValue(value);
    if (masked !== value) walk.freeMasked = true;
    return masked;
  }
  if (value === null || typeof value !== "object") return value;
  const inherited = kind === "card" || kind === "code" ? kind : null;
  if (inherited) walk.freeMasked = true;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const masked = loggedJson(value[i], inherited ?? kind, walk);
      if (masked !== value[i]) (out ??= [...value])[i] = masked;
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const named = kindOf(key);
    const masked = loggedJson(record[key], inherited ?? (walk.freeOnly && named !== "free" ? null : named), walk);
    if (masked !== record[key]) (out ??= { ...record })[key] = masked;
  }
  return out ?? value;
}

/**
 * Sandgate's own masking of what it keeps or sends (the request log, its HAR export, notifications):
 * anything under a card or security-code name, whatever its shape, and card numbers typed into free
 * text; every other value as it is (a bank account number that happens to pass Luhn is the
 * merchant's data, not a card). The recorder, writing the real gateway's traffic, masks more
 * (maskBody: secrets, a Luhn run in any field). The same value when nothing is masked.
 */
export const maskCardFields = <T>(value: T): T => loggedJson(value, null, newWalk()) as T;

const isJsonText = (text: string) => {
  const start = text.trimStart();
  return start.startsWith("{") || start.startsWith("[");
};

/**
 * A request's text as the request log keeps it (in memory and in Redis): JSON (`parsed`, the body
 * the request parsed from this text) or a form, with what loggedValue masks masked. Narrower than
 * maskBody (no secret names, no Luhn runs in any field) and cheaper: one pass with the names' kinds cached.
 */
function loggedText(text: string, parsed: unknown, walk = newWalk()): string {
  if (!isJsonText(text)) return maskForm(text, loggedValue);
  const masked = loggedJson(parsed, null, walk);
  return masked === parsed ? text : JSON.stringify(masked);
}

/**
 * A request's fields with the card numbers typed into any field but the card's own (a name, an
 * address, a note; identifiers, times and bank details kept as sent) masked, however deep, before
 * the request is decided and stored; the card itself is left for the operation to decide with. The
 * same object when nothing was masked.
 */
const maskFreeText = <T>(value: T): T => loggedJson(value, null, newWalk(true)) as T;

/**
 * A gateway request as it goes on: its fields with card numbers outside the card fields masked
 * (maskFreeText), and its text as the request log keeps it (loggedText). The fields are walked once
 * for free text, with the names' kinds cached: cheaper than scanning the whole text for Luhn-valid
 * runs (a capture's 16-digit ids would all be checked), and it sees through escapes. The text is kept as sent, not walked again, when no free-text value was masked and it
 * names no card or code: a name the regex sees only when the text escapes nothing (no % or \u).
 * A JSON body that names one (a card payment) is walked once for the log, and again for its fields
 * only when that walk masked free text (or met a card holding an object): otherwise the fields are
 * already as sent.
 */
export function maskRequest<T>(body: T, text: string): { body: T; text: string } {
  const mayName = text.includes("%") || text.includes("\\u") || MAY_HOLD.test(text);
  if (mayName && isJsonText(text)) {
    const walk = newWalk();
    const logged = loggedText(text, body, walk);
    return { body: walk.freeMasked ? maskFreeText(body) : body, text: logged };
  }
  const freed = maskFreeText(body);
  if (freed === body && !mayName) return { body, text };
  return { body: freed, text: loggedText(text, body) };
}

/** The name a form key stands for: `subscription[card]` is a `card`, `cards[0]` a `cards`. */
function fieldName(key: string): string {
  if (!key.includes("[")) return key;
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
export function maskForm(text: string, leaf: (name: string, value: string) => string = maskValue): string {
  let changed = false;
  const pairs = text.split("&").map((pair) => {
    const eq = pair.indexOf("=");
    if (eq < 0) return pair;
    const key = decodeFormPart(pair.slice(0, eq));
    const value = decodeFormPart(pair.slice(eq + 1));
    if (key === undefined || value === undefined) return pair;
    const masked = leaf(key, value);
    if (masked === value) return pair;
    changed = true;
    return `${pair.slice(0, eq)}=${encodeURIComponent(masked)}`;
  });
  return changed ? pairs.join("&") : text;
}

/**
 * A JSON value with every field masked, however deep; `name` is the key it sits under. Under a card
 * or security-code name everything is masked, whatever its shape. The same value (not a copy) when nothing was masked.
 */
function maskJson(value: unknown, name = "", under: Sensitive = undefined): unknown {
  const sensitive = under ?? sensitiveName(name);
  if (typeof value === "string" || typeof value === "number" || typeof value === "bigint") {
    const text = String(value);
    const masked = sensitive === "card" ? maskCardNumber(text) : sensitive === "code" ? "*".repeat(text.length) : maskValue(name, text);
    return masked === text ? value : masked;
  }
  if (sensitive && value !== null && typeof value === "object") {
    if (Array.isArray(value)) return value.map((v) => maskJson(v, name, sensitive));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskJson(v, k, sensitive)]));
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

/** HAR's queryString (or any name/value list), masked. */
export function maskPairs(pairs: readonly { name: string; value: string }[]): { name: string; value: string }[] {
  return pairs.map(({ name, value }) => ({ name, value: maskValue(name, value) }));
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

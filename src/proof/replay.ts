// A recorded request as it is sent to Sandgate: the real gateway's ids replaced by Sandgate's (id
// map), a masked card replaced by a card Sandgate knows, a starred security code by digits,
// notify_url pointed at verify's own receiver, and encryption_data signed again with Sandgate's key.
// The body keeps its format (JSON, form, JSON with a form content type) and its field order.
import qs from "qs";
import { passesLuhn } from "../domain/card-numbers.js";
import { signatureFields, sign } from "../domain/signature.js";
import { operationAt } from "../domain/gateway-operations.js";
import { formatOf } from "./documents.js";
import type { IdMap } from "./id-map.js";
import { headerOf, pathOf, postText, type HarEntry } from "./har.js";

export interface ReplayContext {
  ids: IdMap;
  /** the merchant's key in Sandgate (--key, or the fixture's, or a provisioned merchant's) */
  keyOf(merchantId: string): string;
  /** a full card number for a masked one (first six and last four kept) */
  cardFor(masked: string): string;
  /** where Sandgate's notifications go during the replay */
  notifyUrl: string;
}

export interface PreparedRequest {
  method: string;
  /** path and query, to send to Sandgate's origin */
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** the request's values by field name (any depth), after mapping: what an answer may echo */
  echoes: Map<string, Set<string>>;
  /** the body's fields as sent (JSON or form), when it could be read */
  fields?: Record<string, unknown>;
}

/** Headers that shape an answer and are sent again; the rest are the recorder's or the client's business. */
const KEPT_HEADERS = /^(content-type|accept|x-sandbox-[\w-]+)$/i;

export function prepareRequest(entry: HarEntry, ctx: ReplayContext): PreparedRequest {
  const { request } = entry;
  const mapped = ctx.ids.mapUrl(request.url);
  const path = pathAndQuery(mapped);
  const headers: Record<string, string> = {};
  for (const h of request.headers) if (KEPT_HEADERS.test(h.name)) headers[h.name.toLowerCase()] = h.value;
  const echoes = new Map<string, Set<string>>();
  const text = postText(entry);
  if (text === undefined || text === "") return { method: request.method, path, headers, body: text, echoes };
  const contentType = headerOf(request.headers, "content-type") ?? request.postData?.mimeType ?? "";
  const format = formatOf(contentType, text);
  let fields: unknown;
  try {
    fields = format === "json" ? JSON.parse(text) : format === "form" ? qs.parse(text, { depth: 0, parameterLimit: 10_000 }) : undefined;
  } catch {
    fields = undefined;
  }
  // a body that is not what it says is sent as it was: the answer to it is part of what is compared
  if (!fields || typeof fields !== "object") return { method: request.method, path, headers, body: text, echoes };
  const body = rewrite(fields, "", ctx) as Record<string, unknown>;
  collectEchoes(body, "", echoes);
  const operation = operationAt(pathOf(path));
  if (operation && typeof body.encryption_data === "string") {
    body.encryption_data = sign(signatureFields[operation].request, body, ctx.keyOf(String(body.merchant_id ?? ""))).signature;
  }
  const out = format === "json" ? JSON.stringify(body) : qs.stringify(body, { arrayFormat: "repeat" });
  return { method: request.method, path, headers, body: out, echoes, fields: body };
}

function pathAndQuery(url: string): string {
  const m = /^(?:https?:\/\/[^/?#]+)?([^#]*)/.exec(url);
  const rest = m?.[1] ?? "/";
  return rest.startsWith("/") ? rest : `/${rest}`;
}

const MASKED_CARD = /^(\d{6})\*+(\d{4})$/;
const STARRED = /^\*+$/;

function rewrite(value: unknown, key: string, ctx: ReplayContext): unknown {
  if (Array.isArray(value)) return value.map((v) => rewrite(v, key, ctx));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v, k, ctx)]));
  if (typeof value !== "string") return value;
  if (key === "notify_url" && value !== "") return ctx.notifyUrl;
  if (MASKED_CARD.test(value)) return ctx.cardFor(value);
  if (STARRED.test(value) && /^(security_code|cvv2?|cvc|csc)$/i.test(key)) return "1234".slice(0, value.length).padEnd(value.length, "0");
  return ctx.ids.map(value);
}

function collectEchoes(value: unknown, key: string, out: Map<string, Set<string>>): void {
  if (Array.isArray(value)) return value.forEach((v) => collectEchoes(v, key, out));
  if (value !== null && typeof value === "object") return Object.entries(value).forEach(([k, v]) => collectEchoes(v, k, out));
  if (typeof value === "string" && value !== "" && key !== "encryption_data") {
    let set = out.get(key);
    if (!set) out.set(key, (set = new Set()));
    set.add(value);
  }
}

/**
 * A full number for a masked card: the test card of Sandgate's scenarios with the same first six and
 * last four (the gateway's test cards are public, so a recording of a decline card replays as that
 * card), or else a Luhn-valid number with those digits and zeros between.
 */
export function cardResolver(knownCards: readonly string[]): (masked: string) => string {
  return (masked) => {
    const m = MASKED_CARD.exec(masked);
    if (!m) return masked;
    const [, first, last] = m as unknown as [string, string, string];
    const known = knownCards.find((c) => c.length === masked.length && c.startsWith(first) && c.endsWith(last));
    if (known) return known;
    const middle = masked.length - 10;
    for (let d = 0; d < 10; d++) {
      const candidate = `${first}${"0".repeat(Math.max(middle - 1, 0))}${middle > 0 ? d : ""}${last}`;
      if (passesLuhn(candidate)) return candidate;
    }
    return `${first}${"0".repeat(Math.max(middle, 0))}${last}`;
  };
}

/** Card numbers named in scenario files (any 13–19 digit value that passes Luhn). */
export function cardsIn(texts: readonly string[]): string[] {
  const out = new Set<string>();
  for (const text of texts) for (const m of text.matchAll(/\b\d{13,19}\b/g)) if (passesLuhn(m[0])) out.add(m[0]);
  return [...out];
}

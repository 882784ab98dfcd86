// A recorded exchange masked before it is written to a HAR (sandgate record): JSON, form, XML and
// HTML bodies by what they hold, header pairs and query lists. The rules of what is a card, a
// security code or a secret are domain/masking.ts's, the one masking of card data.
import { escapeHtml, escapeText, scriptSafeJson } from "../base/markup.js";
import { isSecretName, maskForm, maskJsonText, maskPairs, maskUrl, maskValue, SECRET_HEADER, SECRET_MASK } from "../domain/masking.js";
import type { NameValue } from "./har-writer.js";

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

/** XML: the text of every element without children (`<card>…</card>`), by the element's name. */
function maskXml(text: string): string {
  return text.replace(/<([A-Za-z_][\w.:-]*)(\s[^>]*)?>([^<]*)<\/\1\s*>/g, (whole, name: string, attrs: string | undefined, inner: string) => {
    const value = decodeEntities(inner);
    const masked = maskValue(name.replace(/^.*:/, ""), value);
    return masked === value ? whole : `<${name}${attrs ?? ""}>${escapeText(masked)}</${name}>`;
  });
}

const ATTRIBUTE = (attr: string) => new RegExp(`(\\s${attr}\\s*=\\s*)("([^"]*)"|'([^']*)'|([^\\s>"']+))`, "i");

/** HTML: `<input name=… value=…>` values by their name, and JSON data blocks (`<script type="application/json">`). */
function maskHtml(text: string): string {
  const inputs = text.replace(/<input\b[^>]*>/gi, (tag) => {
    const nameMatch = ATTRIBUTE("name").exec(tag);
    const valueMatch = ATTRIBUTE("value").exec(tag);
    if (!nameMatch || !valueMatch) return tag;
    const name = decodeEntities(nameMatch[3] ?? nameMatch[4] ?? nameMatch[5] ?? "");
    const value = decodeEntities(valueMatch[3] ?? valueMatch[4] ?? valueMatch[5] ?? "");
    const masked = maskValue(name, value);
    if (masked === value) return tag;
    return tag.replace(ATTRIBUTE("value"), (_all, prefix: string) => `${prefix}"${escapeHtml(masked)}"`);
  });
  return inputs.replace(
    /(<script\b[^>]*\btype\s*=\s*["']?application\/(?:ld\+)?json["']?[^>]*>)([\s\S]*?)(<\/script\s*>)/gi,
    (whole, open: string, json: string, close: string) => {
      const masked = maskJsonText(json);
      return masked === undefined || masked === json ? whole : `${open}${scriptSafeJson(masked)}${close}`;
    },
  );
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

/** Header pairs kept (`keep`), their values masked. */
export function headerPairs(rawHeaders: readonly string[], keep: (name: string) => boolean): NameValue[] {
  const pairs: NameValue[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (keep(name.toLowerCase())) pairs.push({ name, value: maskHeader(name, rawHeaders[i + 1]!) });
  }
  return pairs;
}

/** A URL's query as HAR's queryString, masked. */
export function queryOf(url: string): NameValue[] {
  const q = url.indexOf("?");
  if (q < 0) return [];
  return maskPairs([...new URLSearchParams(url.slice(q + 1).split("#")[0]).entries()].map(([name, value]) => ({ name, value })));
}

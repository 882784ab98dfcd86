// Text into markup, written once: the escaping of XML content, of HTML (text and attributes) and of
// JSON inside a <script> block, and the only place that writes XML. Every page, answer, masked
// recording and refusal escapes through here.
//
// XML: a declaration, then elements indented by two spaces, an empty element as <name/>, text
// escaped (& < >). It writes exactly what xmlbuilder2's pretty printer
// wrote for the same tree (test/xml-render.test.ts proves it against xmlbuilder2 for arbitrary
// trees and texts), without building a DOM per answer (its cost: docs/architecture.md's fast paths).
/** An element: a text value, or a list of child elements (repeated names allowed). */
export type XmlValue = string | number | XmlNode[];
export type XmlNode = [name: string, value: XmlValue];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };
const SPECIAL = /[&<>]/g;
/** Text as element content: "&" is always escaped, so text that looks like an entity reads back as sent. */
export const escapeText = (text: string) => (SPECIAL.test(text) ? text.replace(SPECIAL, (c) => ESCAPES[c]!) : text);

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text or an attribute value (quoted either way) in HTML. */
export function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/** JSON text made safe inside <script>: no "</script>", no HTML comment openers, no line separators. */
export function scriptSafeJson(json: string): string {
  return json
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** A value as JSON safe to place inside <script>. */
export const jsonForScript = (value: unknown): string => scriptSafeJson(JSON.stringify(value));

function write(nodes: XmlNode[], indent: string, out: string[]): void {
  for (const [name, value] of nodes) {
    if (Array.isArray(value)) {
      if (value.length === 0) {
        out.push(`${indent}<${name}/>`);
        continue;
      }
      out.push(`${indent}<${name}>`);
      write(value, `${indent}  `, out);
      out.push(`${indent}</${name}>`);
    } else {
      const text = String(value);
      out.push(text === "" ? `${indent}<${name}/>` : `${indent}<${name}>${escapeText(text)}</${name}>`);
    }
  }
}

export function renderXml(root: string, children: XmlNode[]): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>'];
  write([[root, children]], "", out);
  return out.join("\n");
}

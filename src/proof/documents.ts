// A body as a tree verify can compare, whatever its format: XML (children in order, names may
// repeat), JSON, a form (name → value), HTML (title, forms and their inputs). Reading never throws:
// a body that is not what its content type says becomes an "unreadable" tree with the reason.
import qs from "qs";

export type Tree =
  | { kind: "object"; entries: [string, Tree][]; ordered: boolean }
  | { kind: "list"; items: Tree[] }
  | { kind: "value"; value: string | number | boolean | null }
  | { kind: "unreadable"; format: string; reason: string; text: string };

export type Format = "xml" | "json" | "form" | "html" | "text";

/** The format of a content type (a JSON text sent with a form content type is read as JSON). */
export function formatOf(contentType: string, text = ""): Format {
  const type = contentType.toLowerCase();
  if (type.includes("xml")) return "xml";
  if (type.includes("json")) return "json";
  if (type.includes("html")) return "html";
  if (type.includes("x-www-form-urlencoded")) return /^\s*[{[]/.test(text) ? "json" : "form";
  return "text";
}

export function readTree(format: Format, text: string): Tree {
  try {
    if (format === "json") return fromJson(JSON.parse(text) as unknown);
    if (format === "form") return fromJson(qs.parse(text, { depth: 0, parameterLimit: 10_000 }));
    if (format === "xml") return readXml(text);
    if (format === "html") return readHtml(text);
    return { kind: "value", value: text };
  } catch (err) {
    return { kind: "unreadable", format, reason: (err as Error).message, text };
  }
}

export function fromJson(value: unknown): Tree {
  if (Array.isArray(value)) return { kind: "list", items: value.map(fromJson) };
  if (value !== null && typeof value === "object") return { kind: "object", ordered: false, entries: Object.entries(value).map(([k, v]) => [k, fromJson(v)]) };
  if (value === undefined) return { kind: "value", value: null };
  return { kind: "value", value: value as string | number | boolean | null };
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const decode = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) => {
    if (name[0] === "#") return String.fromCodePoint(name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : Number(name.slice(1)));
    return ENTITIES[name] ?? whole;
  });

/**
 * A strict reader of the gateway's XML: elements (attributes are skipped), text, entities, CDATA,
 * comments. xmlbuilder2's parser accepts an element that is never closed, and a cut-off answer is
 * exactly what verify must report, so this one throws on it.
 */
export function readXml(text: string): Tree {
  const tokens = /<!\[CDATA\[([\s\S]*?)\]\]>|<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!DOCTYPE[^>]*>|<(\/?)([A-Za-z_][\w.:-]*)((?:\s+[^\s=>/]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|([^<]+)|(<)/g;
  type Open = { name: string; children: [string, Tree][]; text: string };
  const stack: Open[] = [{ name: "", children: [], text: "" }];
  for (const m of text.matchAll(tokens)) {
    const [, cdata, closing, name, , selfClosing, chars, stray] = m;
    const top = stack[stack.length - 1]!;
    if (stray) throw new Error(`a "<" that opens no tag at character ${m.index}`);
    if (cdata !== undefined) top.text += cdata;
    else if (chars !== undefined) {
      if (stack.length === 1 && chars.trim()) throw new Error("text outside the root element");
      top.text += decode(chars);
    } else if (name && closing) {
      if (top.name !== name) throw new Error(top.name ? `</${name}> closes <${top.name}>` : `</${name}> closes nothing`);
      stack.pop();
      stack[stack.length - 1]!.children.push([name, elementTree(top)]);
    } else if (name) {
      if (stack.length === 1 && stack[0]!.children.length) throw new Error("a second root element");
      if (selfClosing) top.children.push([name, { kind: "value", value: "" }]);
      else stack.push({ name, children: [], text: "" });
    }
  }
  if (stack.length > 1) throw new Error(`<${stack[stack.length - 1]!.name}> is never closed (the body is cut off?)`);
  const root = stack[0]!.children[0];
  if (!root) throw new Error("no root element");
  return { kind: "object", ordered: true, entries: [root] };
}

const elementTree = (e: { children: [string, Tree][]; text: string }): Tree =>
  e.children.length ? { kind: "object", ordered: true, entries: e.children } : { kind: "value", value: e.text };

const attr = (tag: string, name: string) => {
  const m = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, "i").exec(tag);
  return m ? decode(m[1] ?? m[2] ?? m[3] ?? "") : undefined;
};

/**
 * An HTML page as what a payer's browser acts on: its title and its forms (name, method, action,
 * and the inputs: <input> tags, and the name/value pairs of a JSON data block the page's script
 * turns into hidden inputs, as Sandgate's loading page does).
 */
export function readHtml(text: string): Tree {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1];
  const forms: Tree[] = [];
  for (const m of text.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const [, tag = "", inner = ""] = m;
    const inputs: [string, Tree][] = [];
    for (const input of inner.matchAll(/<(?:input|button)\b[^>]*>/gi)) {
      const name = attr(input[0], "name");
      if (name !== undefined) inputs.push([name, { kind: "value", value: attr(input[0], "value") ?? "" }]);
    }
    const entries: [string, Tree][] = [
      ["name", { kind: "value", value: attr(tag, "name") ?? "" }],
      ["method", { kind: "value", value: (attr(tag, "method") ?? "GET").toUpperCase() }],
      ["action", { kind: "value", value: attr(tag, "action") ?? "" }],
    ];
    forms.push({ kind: "object", ordered: false, entries: [...entries, ["inputs", { kind: "object", ordered: false, entries: inputs }]] });
  }
  // a data block of [name, value] pairs belongs to the form the page's script fills (the first)
  for (const m of text.matchAll(/<script\b[^>]*type\s*=\s*["']application\/json["'][^>]*>([\s\S]*?)<\/script>/gi)) {
    const pairs = JSON.parse(m[1]!) as unknown;
    const first = forms[0];
    if (!Array.isArray(pairs) || first?.kind !== "object") continue;
    const inputs = first.entries.find(([k]) => k === "inputs")![1];
    if (inputs.kind !== "object") continue;
    for (const pair of pairs) if (Array.isArray(pair) && typeof pair[0] === "string") inputs.entries.push([pair[0], { kind: "value", value: String(pair[1] ?? "") }]);
  }
  const entries: [string, Tree][] = [["title", { kind: "value", value: title === undefined ? "" : decode(title).trim() }]];
  if (forms.length) entries.push(["form", forms.length === 1 ? forms[0]! : { kind: "list", items: forms }]);
  return { kind: "object", ordered: false, entries };
}

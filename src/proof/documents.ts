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

function fromJson(value: unknown): Tree {
  if (Array.isArray(value)) return { kind: "list", items: value.map(fromJson) };
  if (value !== null && typeof value === "object") return { kind: "object", ordered: false, entries: Object.entries(value).map(([k, v]) => [k, fromJson(v)]) };
  if (value === undefined) return { kind: "value", value: null };
  return { kind: "value", value: value as string | number | boolean | null };
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const decode = (text: string) =>
  text.indexOf("&") < 0
    ? text
    : text.replace(/&(#x[0-9a-f]{1,8}|#\d{1,10}|\w{1,32});/gi, (whole, name: string) => {
        if (name[0] !== "#") return ENTITIES[name] ?? whole;
        const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : Number(name.slice(1));
        return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      });

// Reading a document is linear in its size, whatever it holds: a recording comes from anyone who can
// reach /__sandbox/verify, and a backtracking pattern over a page that opens 80,000 forms and closes
// none took 37 s. So no pattern here searches ahead for a closing text: one scanner walks the text
// once, each step moving forward, and a search for the end of a comment, a CDATA section, a quoted
// value or a script's text starts where it stands and, when it fails, ends the document.

/** One piece of markup: a tag (its name lower-cased for HTML), a run of text, or something skipped. */
type Piece =
  | { type: "open"; name: string; attrs: [string, string][]; selfClosing: boolean; at: number; end: number }
  | { type: "close"; name: string; at: number; end: number }
  | { type: "text"; text: string; at: number; end: number }
  | { type: "cdata"; text: string; at: number; end: number }
  | { type: "skip"; at: number; end: number };
type Tag = Extract<Piece, { type: "open" | "close" }>;

const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[\w.:-]/;
const SPACE = /\s/;

class MarkupError extends Error {}

/**
 * The pieces of a markup text, in order. XML is read strictly: a "<" that opens nothing, an
 * unterminated comment, CDATA or attribute, or an attribute without a quoted value is an error. HTML
 * (`html`) as a browser reads it: such a "<" is text, what is unterminated runs to the end of the
 * text, names are lower-cased, and a script's, title's or style's text is raw.
 */
function* pieces(text: string, html: boolean): Generator<Piece> {
  const strict = !html;
  const n = text.length;
  let i = 0;
  const unterminated = (what: string, at: number): number => {
    if (strict) throw new MarkupError(`${what} at character ${at} is never closed (the body is cut off?)`);
    return n;
  };
  while (i < n) {
    const lt = text.indexOf("<", i);
    if (lt < 0) {
      yield { type: "text", text: text.slice(i), at: i, end: n };
      return;
    }
    if (lt > i) yield { type: "text", text: text.slice(i, lt), at: i, end: lt };
    i = lt;
    const skipTo = (close: string, what: string, from: number): number => {
      const at = text.indexOf(close, from);
      return at < 0 ? unterminated(what, lt) : at + close.length;
    };
    if (text.startsWith("<![CDATA[", i)) {
      const end = skipTo("]]>", "a CDATA section", i + 9);
      yield { type: "cdata", text: text.slice(i + 9, Math.max(i + 9, end - 3)), at: lt, end };
      i = end;
      continue;
    }
    if (text.startsWith("<!--", i)) {
      i = skipTo("-->", "a comment", i + 4);
      yield { type: "skip", at: lt, end: i };
      continue;
    }
    if (text.startsWith("<?", i) || text.startsWith("<!", i)) {
      i = skipTo(text[i + 1] === "?" ? "?>" : ">", "a declaration", i + 2);
      yield { type: "skip", at: lt, end: i };
      continue;
    }
    const tag = readTag(text, i, strict);
    if (!tag) {
      if (strict) throw new MarkupError(`a "<" that opens no tag at character ${lt}`);
      yield { type: "text", text: "<", at: lt, end: lt + 1 };
      i = lt + 1;
      continue;
    }
    if (html) tag.name = tag.name.toLowerCase();
    yield tag;
    i = tag.end;
    // a script's or a title's text is raw: no tag inside it counts (HTML)
    if (html && tag.type === "open" && !tag.selfClosing && (tag.name === "script" || tag.name === "title" || tag.name === "style")) {
      const close = new RegExp(`</${tag.name}`, "gi");
      close.lastIndex = i;
      const found = close.exec(text);
      const end = found ? found.index : n;
      yield { type: "text", text: text.slice(i, end), at: i, end };
      i = end;
    }
  }
}

/** The tag at `at` ("<name ...>", "</name>", "<name/>"), or undefined when it is not one. Linear in the tag. */
function readTag(text: string, at: number, strict: boolean): Tag | undefined {
  const n = text.length;
  let i = at + 1;
  const closing = text[i] === "/";
  if (closing) i++;
  if (i >= n || !NAME_START.test(text[i]!)) return undefined;
  const nameStart = i;
  while (i < n && NAME_CHAR.test(text[i]!)) i++;
  const name = text.slice(nameStart, i);
  const attrs: [string, string][] = [];
  for (;;) {
    const spaceStart = i;
    while (i < n && SPACE.test(text[i]!)) i++;
    if (i >= n) return strict ? undefined : closing ? { type: "close", name, at, end: n } : { type: "open", name, attrs, selfClosing: false, at, end: n };
    if (text[i] === ">") return closing ? { type: "close", name, at, end: i + 1 } : { type: "open", name, attrs, selfClosing: false, at, end: i + 1 };
    if (text[i] === "/" && text[i + 1] === ">" && !closing) return { type: "open", name, attrs, selfClosing: true, at, end: i + 2 };
    if (i === spaceStart || closing) {
      if (strict) return undefined;
      i++; // a stray character in an HTML tag: passed over
      continue;
    }
    const attrStart = i;
    while (i < n && !SPACE.test(text[i]!) && text[i] !== "=" && text[i] !== ">" && text[i] !== "/") i++;
    if (i === attrStart) {
      if (strict) return undefined;
      i++;
      continue;
    }
    const attrName = text.slice(attrStart, i);
    let j = i;
    while (j < n && SPACE.test(text[j]!)) j++;
    if (text[j] !== "=") {
      if (strict) return undefined;
      attrs.push([attrName, ""]);
      continue;
    }
    j++;
    while (j < n && SPACE.test(text[j]!)) j++;
    const quote = text[j];
    if (quote === '"' || quote === "'") {
      const close = text.indexOf(quote, j + 1);
      if (close < 0) return strict ? undefined : { type: "open", name, attrs, selfClosing: false, at, end: n };
      attrs.push([attrName, text.slice(j + 1, close)]);
      i = close + 1;
    } else {
      if (strict) return undefined;
      const valueStart = j;
      while (j < n && !SPACE.test(text[j]!) && text[j] !== ">") j++;
      attrs.push([attrName, text.slice(valueStart, j)]);
      i = j;
    }
  }
}

/**
 * A strict reader of the gateway's XML: elements (attributes are skipped), text, entities, CDATA,
 * comments. xmlbuilder2's parser accepts an element that is never closed, and a cut-off answer is
 * exactly what verify must report, so this one throws on it.
 */
export function readXml(text: string): Tree {
  type Open = { name: string; children: [string, Tree][]; text: string };
  const stack: Open[] = [{ name: "", children: [], text: "" }];
  try {
    for (const piece of pieces(text, false)) {
      const top = stack[stack.length - 1]!;
      if (piece.type === "cdata") top.text += piece.text;
      else if (piece.type === "text") {
        if (stack.length === 1 && piece.text.trim()) throw new MarkupError("text outside the root element");
        top.text += decode(piece.text);
      } else if (piece.type === "close") {
        if (top.name !== piece.name) throw new MarkupError(top.name ? `</${piece.name}> closes <${top.name}>` : `</${piece.name}> closes nothing`);
        stack.pop();
        stack[stack.length - 1]!.children.push([piece.name, elementTree(top)]);
      } else if (piece.type === "open") {
        if (stack.length === 1 && stack[0]!.children.length) throw new MarkupError("a second root element");
        if (piece.selfClosing) top.children.push([piece.name, { kind: "value", value: "" }]);
        else stack.push({ name: piece.name, children: [], text: "" });
      }
    }
  } catch (err) {
    // an unreadable answer is reported with the reason; only the scanner's own errors are one
    if (err instanceof MarkupError) throw new Error(err.message);
    throw err;
  }
  if (stack.length > 1) throw new Error(`<${stack[stack.length - 1]!.name}> is never closed (the body is cut off?)`);
  const root = stack[0]!.children[0];
  if (!root) throw new Error("no root element");
  return { kind: "object", ordered: true, entries: [root] };
}

const elementTree = (e: { children: [string, Tree][]; text: string }): Tree =>
  e.children.length ? { kind: "object", ordered: true, entries: e.children } : { kind: "value", value: e.text };

const attr = (attrs: readonly [string, string][], name: string) => {
  const found = attrs.find(([k]) => k.toLowerCase() === name);
  return found ? decode(found[1]) : undefined;
};

/**
 * An HTML page as what a payer's browser acts on: its title and its forms (name, method, action,
 * and the inputs: <input> tags, and the name/value pairs of a JSON data block the page's script
 * turns into hidden inputs, as Sandgate's loading page does). A form counts once it is closed; a
 * <form> inside an open one is ignored, as browsers do.
 */
export function readHtml(text: string): Tree {
  let title: string | undefined;
  const forms: Tree[] = [];
  let open: { tag: readonly [string, string][]; inputs: [string, Tree][] } | undefined;
  let inside: string | undefined; // the raw-text element whose text comes next (title, script)
  const dataBlocks: string[] = [];
  for (const piece of pieces(text, true)) {
    if (piece.type === "text" && inside) {
      if (inside === "title" && title === undefined) title = piece.text;
      if (inside === "data") dataBlocks.push(piece.text);
      inside = undefined;
      continue;
    }
    inside = undefined;
    if (piece.type === "open") {
      if (piece.name === "title") inside = "title";
      else if (piece.name === "script") inside = /^application\/json$/i.test(attr(piece.attrs, "type")?.trim() ?? "") ? "data" : "script";
      else if (piece.name === "form" && !open) open = { tag: piece.attrs, inputs: [] };
      else if ((piece.name === "input" || piece.name === "button") && open) {
        const name = attr(piece.attrs, "name");
        if (name !== undefined) open.inputs.push([name, { kind: "value", value: attr(piece.attrs, "value") ?? "" }]);
      }
    } else if (piece.type === "close" && piece.name === "form" && open) {
      const entries: [string, Tree][] = [
        ["name", { kind: "value", value: attr(open.tag, "name") ?? "" }],
        ["method", { kind: "value", value: (attr(open.tag, "method") ?? "GET").toUpperCase() }],
        ["action", { kind: "value", value: attr(open.tag, "action") ?? "" }],
      ];
      forms.push({ kind: "object", ordered: false, entries: [...entries, ["inputs", { kind: "object", ordered: false, entries: open.inputs }]] });
      open = undefined;
    }
  }
  // a data block of [name, value] pairs belongs to the form the page's script fills (the first)
  for (const block of dataBlocks) {
    const pairs = JSON.parse(block) as unknown;
    const first = forms[0];
    if (!Array.isArray(pairs) || first?.kind !== "object") continue;
    const inputs = first.entries.find(([k]) => k === "inputs")![1];
    if (inputs.kind !== "object") continue;
    for (const pair of pairs)
      if (Array.isArray(pair) && typeof pair[0] === "string") inputs.entries.push([pair[0], { kind: "value", value: String(pair[1] ?? "") }]);
  }
  const entries: [string, Tree][] = [["title", { kind: "value", value: title === undefined ? "" : decode(title).trim() }]];
  if (forms.length) entries.push(["form", forms.length === 1 ? forms[0]! : { kind: "list", items: forms }]);
  return { kind: "object", ordered: false, entries };
}

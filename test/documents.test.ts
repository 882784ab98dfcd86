// Reading recorded documents (verify's XML and HTML readers): what they read, and that no document
// anyone can upload makes them slow. A page that opens 80,000 forms and closes none held a
// backtracking pattern for 37 s on the serving thread; the scanner walks a text once.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { readHtml, readTree, readXml, type Tree } from "../src/proof/documents.js";

const value = (tree: Tree, ...path: string[]): unknown => {
  let at: Tree | undefined = tree;
  for (const key of path) at = at?.kind === "object" ? at.entries.find(([k]) => k === key)?.[1] : undefined;
  return at?.kind === "value" ? at.value : at;
};

describe("readXml", () => {
  test("elements in order, entities, CDATA, comments, attributes skipped, self-closing", () => {
    const tree = readXml('<?xml version="1.0"?>\n<!-- c --><respon a="1"><x>a &amp; b &#x41;&#66;</x><y><![CDATA[<raw>]]></y><z/><x>2</x></respon>');
    expect(tree).toEqual({
      kind: "object",
      ordered: true,
      entries: [
        [
          "respon",
          {
            kind: "object",
            ordered: true,
            entries: [
              ["x", { kind: "value", value: "a & b AB" }],
              ["y", { kind: "value", value: "<raw>" }],
              ["z", { kind: "value", value: "" }],
              ["x", { kind: "value", value: "2" }],
            ],
          },
        ],
      ],
    });
  });

  test.each([
    ["<respon><a>1</a>", "<respon> is never closed"],
    ["<respon><a>1</b></respon>", "</b> closes <a>"],
    ["<respon>1 < 2</respon>", 'a "<" that opens no tag'],
    ["<respon><![CDATA[cut", "a CDATA section at character 8 is never closed"],
    ["<respon><!-- cut", "a comment at character 8 is never closed"],
    ['<respon a="cut', 'a "<" that opens no tag at character 0'],
    ["<a/><b/>", "a second root element"],
    ["text", "text outside the root element"],
    ["", "no root element"],
  ])("%j is unreadable: %s", (text, reason) => {
    expect(() => readXml(text)).toThrow(reason);
    const tree = readTree("xml", text);
    expect(tree).toMatchObject({ kind: "unreadable", format: "xml" });
  });

  test("any tree written as XML reads back as that tree (property)", () => {
    type Node = { name: string; children: Node[]; text: string };
    const name = fc.stringMatching(/^[a-z_][a-z0-9_]{0,6}$/);
    const leaf = fc.record({ name, children: fc.constant([] as Node[]), text: fc.string({ maxLength: 8 }) });
    const node: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
      node: fc.oneof({ maxDepth: 4 }, leaf, fc.record({ name, children: fc.array(tie("node"), { maxLength: 3 }), text: fc.constant("") })),
    })).node;
    const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    const write = (n: Node): string =>
      n.children.length ? `<${n.name}>${n.children.map(write).join("")}</${n.name}>` : `<${n.name}>${escape(n.text)}</${n.name}>`;
    const expected = (n: Node): Tree =>
      n.children.length ? { kind: "object", ordered: true, entries: n.children.map((c) => [c.name, expected(c)]) } : { kind: "value", value: n.text };
    fc.assert(
      fc.property(node, (root) => {
        expect(readXml(write(root))).toEqual({ kind: "object", ordered: true, entries: [[root.name, expected(root)]] });
      }),
    );
  });
});

describe("readHtml", () => {
  test("title, forms with method, action and inputs, a JSON data block's pairs, case and quoting as browsers allow", () => {
    const page = `<!DOCTYPE html><HTML><head><TITLE> Pay &amp; go </TITLE><script>if (a < b) document.write("<form>")</script></head>
      <body><FORM name=pay method=post action='https://gw.example/pay?a=1&amp;b=2'><input type="hidden" name="order_no" value="O-1"><input name=flag disabled><button name="go">Go</button></FORM>
      <script type="application/json">[["extra","x"],["n",3]]</script><form action="/two"></form></body></HTML>`;
    const tree = readHtml(page);
    expect(value(tree, "title")).toBe("Pay & go");
    const forms = (tree as { entries: [string, Tree][] }).entries.find(([k]) => k === "form")![1];
    expect(forms.kind).toBe("list");
    const [first, second] = (forms as { items: Tree[] }).items;
    expect(value(first!, "name")).toBe("pay");
    expect(value(first!, "method")).toBe("POST");
    expect(value(first!, "action")).toBe("https://gw.example/pay?a=1&b=2");
    expect(first && first.kind === "object" && first.entries.find(([k]) => k === "inputs")![1]).toEqual({
      kind: "object",
      ordered: false,
      entries: [
        ["order_no", { kind: "value", value: "O-1" }],
        ["flag", { kind: "value", value: "" }],
        ["go", { kind: "value", value: "" }],
        ["extra", { kind: "value", value: "x" }],
        ["n", { kind: "value", value: "3" }],
      ],
    });
    expect(value(second!, "method")).toBe("GET");
    expect(value(second!, "action")).toBe("/two");
  });

  test("a form never closed is not a form; a form inside an open one is ignored", () => {
    expect(readHtml("<title>t</title><form action=/a><input name=x>")).toEqual({
      kind: "object",
      ordered: false,
      entries: [["title", { kind: "value", value: "t" }]],
    });
    const nested = readHtml('<form action="/outer"><form action="/inner"><input name="x"></form></form>');
    expect(value(nested, "form", "action")).toBe("/outer");
  });
});

// A reader that backtracks or rescans takes minutes on these (a backtracking pattern held 80,000
// forms 37 s); a reader that walks the text once, well under a second. The test's deadline only
// turns such a hang into a failure; how long the reading takes, and that four times the text takes
// about four times as long, is `npm run bench`'s "documents" scenario.
describe("no document hangs its reader", () => {
  // the uploads that froze the sandbox, and their cousins: each opener repeated, never closed
  const hostile: [string, string, "xml" | "html"][] = [
    ["<form> never closed", "<form>", "html"],
    ["<form with an unclosed quote", '<form action="', "html"],
    ["<title>", "<title>", "html"],
    ["<script type=application/json>", '<script type="application/json">', "html"],
    ["<!--", "<!--", "html"],
    ["<a b=c d=e (a tag never ended)", "<a b=c d=e ", "html"],
    ["<x> never closed (XML)", "<x>", "xml"],
    ["<![CDATA[ (XML)", "<![CDATA[", "xml"],
    ["<!-- (XML)", "<!--", "xml"],
    ["&#x1111 (XML entities)", "<a>&#x11111111111", "xml"],
  ];
  test.each(hostile)("200,000 × %s: read, as a tree or as unreadable", (_name, opener, format) => {
    const tree = readTree(format, opener.repeat(200_000));
    expect(["object", "value", "unreadable"]).toContain(tree.kind);
  });

  test("any text built of markup's pieces reads without throwing, as a tree or as unreadable with a reason (fuzz)", () => {
    const piece = fc.constantFrom(
      "<",
      ">",
      "</",
      "/>",
      "<form",
      "</form>",
      "<input",
      " name=",
      '"',
      "'",
      "=",
      "<!--",
      "-->",
      "<![CDATA[",
      "]]>",
      "<?",
      "?>",
      "<!",
      "<title>",
      "</title>",
      '<script type="application/json">',
      "</script>",
      "&amp;",
      "&#x",
      ";",
      "a",
      " ",
      "[[",
      "]]",
    );
    const text = fc.array(piece, { maxLength: 60 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(text, fc.constantFrom("xml" as const, "html" as const), (t, format) => {
        const tree = readTree(format, t);
        if (tree.kind === "unreadable") expect(tree.reason).not.toBe("");
        else expect(tree.kind).toBe("object");
      }),
      { numRuns: 2000 },
    );
  });
});

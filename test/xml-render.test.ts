// Sandgate writes XML answers itself (src/base/markup.ts) instead of building an xmlbuilder2 DOM per
// answer. xmlbuilder2's pretty printer stays the reference: for any tree of elements and any text
// (markup characters, entity look-alikes, control characters, non-BMP), the bytes are the same.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { create } from "xmlbuilder2";
import { renderXml, type XmlNode } from "../src/base/markup.js";

/** What Sandgate wrote before: xmlbuilder2, "&" escaped first so entity look-alikes read back as sent. */
function reference(root: string, children: XmlNode[]): string {
  const doc = create({ version: "1.0", encoding: "UTF-8" }).ele(root);
  const add = (parent: ReturnType<typeof doc.ele>, nodes: XmlNode[]) => {
    for (const [name, value] of nodes) {
      const el = parent.ele(name);
      if (Array.isArray(value)) add(el, value);
      else el.txt(String(value).replace(/&/g, "&amp;"));
    }
  };
  add(doc, children);
  return doc.end({ prettyPrint: true });
}

const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,12}$/);
const text = fc.oneof(
  fc.string({ unit: "grapheme-composite", maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.constantFrom("", " ", "&amp;", "&#65;", "<b>", "a > b & c < d", "]]>", "line\nline", "\t x \r"),
  fc.integer(),
  fc.double({ noNaN: true }),
);
const { tree } = fc.letrec<{ tree: XmlNode[]; node: XmlNode }>((tie) => ({
  tree: fc.array(tie("node"), { maxLength: 5 }),
  node: fc.tuple(name, fc.oneof({ depthSize: "small" }, text, tie("tree"))) as fc.Arbitrary<XmlNode>,
}));

describe("XML answers", () => {
  test("are byte for byte what xmlbuilder2 writes, for any tree and text", () => {
    fc.assert(
      fc.property(name, tree, (root, children) => {
        expect(renderXml(root, children)).toBe(reference(root, children));
      }),
      { numRuns: 2000 },
    );
  });

  test("a direct payment's answer, nested and escaped", () => {
    const children: XmlNode[] = [
      ["order_no", "A&B<1>"],
      ["note", "&amp; stays as sent"],
      [
        "risk_reasons",
        [
          [
            "reason",
            [
              ["name", "velocity"],
              ["status", "ACCEPT"],
            ],
          ],
        ],
      ],
      ["recurring_id", ""],
      ["amount", 10],
    ];
    expect(renderXml("respon", children)).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        "<respon>",
        "  <order_no>A&amp;B&lt;1&gt;</order_no>",
        "  <note>&amp;amp; stays as sent</note>",
        "  <risk_reasons>",
        "    <reason>",
        "      <name>velocity</name>",
        "      <status>ACCEPT</status>",
        "    </reason>",
        "  </risk_reasons>",
        "  <recurring_id/>",
        "  <amount>10</amount>",
        "</respon>",
      ].join("\n"),
    );
    expect(reference("respon", children)).toBe(renderXml("respon", children));
  });
});

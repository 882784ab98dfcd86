// The only place that writes XML. Values are text nodes, so xmlbuilder2 escapes them.
import { create } from "xmlbuilder2";

/** An element: a text value, or a list of child elements (repeated names allowed). */
export type XmlValue = string | number | XmlNode[];
export type XmlNode = [name: string, value: XmlValue];

export function renderXml(root: string, children: XmlNode[]): string {
  const doc = create({ version: "1.0", encoding: "UTF-8" }).ele(root);
  const add = (parent: ReturnType<typeof doc.ele>, nodes: XmlNode[]) => {
    for (const [name, value] of nodes) {
      const el = parent.ele(name);
      if (Array.isArray(value)) add(el, value);
      // xmlbuilder2 leaves an "&" that already looks like an entity ("&amp;", "&#65;") as it is:
      // escape every "&" first so the text reads back exactly as given.
      else el.txt(String(value).replace(/&/g, "&amp;"));
    }
  };
  add(doc, children);
  return doc.end({ prettyPrint: true });
}

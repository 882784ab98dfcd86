// Reports as text: aligned terminal columns, and text safe in XML (JUnit) attributes and bodies.
// Used by verify's reports (proof/report.ts) and the receiver check's (receiver-check/check-report.ts).
import { escapeText } from "../base/markup.js";

/** The text cut to n characters, an ellipsis saying so. */
export const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * Aligned columns for the terminal, a rule under the head: a column is as wide as its widest cell,
 * at most `max` (longer cells are cut); with `lastFree` the last column is never cut.
 */
export function textTable(head: string[], rows: string[][], max = 48, lastFree = false): string[] {
  const last = head.length - 1;
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const shown = widths.map((w, i) => (lastFree && i === last ? w : Math.min(max, w)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (lastFree && i === last ? c : cut(c, shown[i]!).padEnd(shown[i]!)))
      .join("  ")
      .trimEnd();
  return [line(head), line(shown.map((w, i) => "-".repeat(lastFree && i === last ? head[i]!.length : w))), ...rows.map(line)];
}

/** Text for an XML attribute's double quotes. */
export const attr = (s: string) => escapeText(s).replace(/"/g, "&quot;");
/** XML 1.0 cannot hold most control characters, even escaped */
export const xmlSafe = (s: string) =>
  Array.from(s, (c) => {
    const code = c.charCodeAt(0);
    return (code < 0x20 && c !== "\t" && c !== "\n" && c !== "\r") || code === 0xfffe || code === 0xffff ? "\ufffd" : c;
  }).join("");

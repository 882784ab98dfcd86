// The README and the pages of docs/ as the docs tests read them: the pages, their fenced blocks,
// their headings' anchors (as GitHub makes them) and their relative links.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect } from "vitest";

export const ROOT = resolve(import.meta.dirname, "..");

export interface Page {
  /** path from the repository root: README.md, docs/x.md */
  path: string;
  text: string;
}

export function docPages(): Page[] {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", ...docs].map((path) => ({ path, text: readFileSync(join(ROOT, path), "utf8") }));
}

export interface Block {
  page: string;
  /** the line of the block's first line of code, from 1 */
  line: number;
  lang: string;
  text: string;
}

/** The fenced code blocks of a page in these languages. */
export function fencedBlocks(page: Page, langs: string[]): Block[] {
  const out: Block[] = [];
  const lines = page.text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    let j = i + 1;
    while (j < lines.length && !lines[j]!.startsWith("```")) j++;
    if (langs.includes(open[1]!)) out.push({ page: page.path, line: i + 2, lang: open[1]!, text: lines.slice(i + 1, j).join("\n") });
    i = j;
  }
  return out;
}

/** The one block of a page (README.md, docs/x.md), in these languages, that holds this text: a test fails when there is none, or more. */
export function blockHolding(path: string, langs: string[], holding: string): Block {
  const page = docPages().find((p) => p.path === path);
  const found = page ? fencedBlocks(page, langs).filter((b) => b.text.includes(holding)) : [];
  expect(found, `${path}: one ${langs.join("/")} block holding ${JSON.stringify(holding)}`).toHaveLength(1);
  return found[0]!;
}

/** The page's text outside fenced blocks. */
export const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, "");

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-");

/** The anchors of a page's headings. */
export function anchors(text: string): Set<string> {
  return new Set([...prose(text).matchAll(/^#+ (.*)$/gm)].map((m) => anchorOf(m[1]!)));
}

// The frame of every page Sandgate hosts itself (payer pages, QA dashboard): one stylesheet and
// its own scripts (run in order), all served from /__sandbox/assets, and a Content-Security-Policy that
// allows nothing else (no inline script, no third party). Bodies must already be escaped HTML.
import type { Response } from "express";
import { escapeHtml, htmlDocument } from "./html.js";

export const ASSETS_PATH = "/__sandbox/assets";

/** Scripts and styles only from this server; no plugins, frames or foreign connections; forms may go anywhere (return_url). */
export const PAGE_CSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'";

export interface LayoutOptions {
  /** the banner's words after "Sandgate sandbox" */
  banner: string;
  /** main.payer (narrow) or main.wide (dashboard) */
  width?: "payer" | "wide";
  /** asset scripts, run in this order, e.g. "dashboard.js" */
  script?: string | readonly string[];
}

export function layout(title: string, body: string, options: LayoutOptions): string {
  const scripts = options.script === undefined ? [] : typeof options.script === "string" ? [options.script] : options.script;
  const script = scripts.map((name) => `\n<script src="${ASSETS_PATH}/${escapeHtml(name)}" defer></script>`).join("");
  return htmlDocument(
    title,
    `<link rel="icon" href="data:,">\n<link rel="stylesheet" href="${ASSETS_PATH}/sandgate.css">${script}`,
    `<div class="banner"><strong>Sandgate sandbox</strong> · ${escapeHtml(options.banner)}</div>\n<main class="${options.width ?? "payer"}">\n${body}\n</main>`,
  );
}

/** Sends a page with its CSP; pages show live state, so nothing is cached. */
export function sendHtml(res: Response, status: number, html: string): void {
  res.status(status).set({ "Content-Security-Policy": PAGE_CSP, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" }).type("html").send(html);
}

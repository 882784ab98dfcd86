// The frame of every page Sandgate hosts itself (payer pages, QA dashboard): one stylesheet and
// its own scripts (run in order), all served from /__sandbox/assets, and a Content-Security-Policy that
// allows nothing else (no inline script, no third party). Bodies must already be escaped HTML.
import type { Response } from "express";
import { escapeHtml } from "../base/markup.js";
import { htmlDocument } from "./html.js";
import { SANDBOX_PATH } from "../base/paths.js";

export const ASSETS_PATH = `${SANDBOX_PATH}/assets`;

/** Scripts and styles only from this server; no plugins, frames or foreign connections; forms may go anywhere (return_url). */
const PAGE_CSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'";

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

/**
 * The dashboard's policy: the payer pages' one, and besides, no site may frame it (a page could lay
 * it under its own and have a tester click its buttons) and its forms post only to it. Payer pages
 * stay embeddable: the gateway's redirect payment is an iFrame payment.
 */
const DASHBOARD_CSP = `${PAGE_CSP}; frame-ancestors 'none'; form-action 'self'`;

/**
 * Sends a page with its CSP; pages show live state, so nothing is cached. A dashboard page
 * (res.locals.formToken set, see admin/cross-site.ts) gets the dashboard's policy, and the form
 * token in every form that posts.
 */
export function sendHtml(res: Response, status: number, html: string): void {
  const token = res.locals.formToken as string | undefined;
  const body = token ? html.replace(/<form method="post"[^>]*>/g, (open) => `${open}<input type="hidden" name="_form" value="${escapeHtml(token)}">`) : html;
  const csp = token ? DASHBOARD_CSP : PAGE_CSP;
  res.status(status).set({ "Content-Security-Policy": csp, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" }).type("html").send(body);
}

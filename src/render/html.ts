// HTML helpers shared by every page Sandgate serves.
import { createHash } from "node:crypto";
import { escapeHtml } from "../base/markup.js";

/** An HTML document; `head` and `body` must already be escaped HTML. */
export function htmlDocument(title: string, head: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
${head}
</head>
<body>
${body}
</body>
</html>
`;
}

/** A minimal standalone page with its style inline (gateway answers a merchant may serve from its own site). */
export function page(title: string, body: string): string {
  return htmlDocument(title, `<style>${PAGE_STYLE}</style>`, body);
}

/** The style of the gateway's own pages (page()): inline, allowed by its hash in their policy. */
export const PAGE_STYLE = `body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1f2933}
dt{font-weight:600}dd{margin:0 0 .5rem}.error{color:#b42318}`;

/** A Content-Security-Policy source allowing exactly this inline <script> or <style> text. */
export const cspHash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

// The dashboard's frame and small building blocks: tabs, flash message, tables, buttons that post.
// Every value passes through escapeHtml here or in the page that calls these.
import { escapeHtml as e } from "../base/markup.js";
import { layout } from "../render/layout.js";
import { SANDBOX_PATH } from "../base/paths.js";

export const BASE = SANDBOX_PATH;

/** [name, href, label (default: the name capitalised)] */
export const TABS: [string, string, string?][] = [
  ["overview", `${BASE}/`],
  ["playground", `${BASE}/ui/playground`],
  ["transactions", `${BASE}/ui/transactions`],
  ["requests", `${BASE}/ui/requests`],
  ["notifications", `${BASE}/ui/notifications`],
  ["payouts", `${BASE}/ui/payouts`],
  ["subscriptions", `${BASE}/ui/subscriptions`],
  ["coverage", `${BASE}/ui/coverage`],
  ["verify", `${BASE}/ui/verify`],
  ["receiver-check", `${BASE}/ui/receiver-check`, "Receiver check"],
];

export interface Flash {
  text: string;
  ok: boolean;
}

export function frame(title: string, current: string, body: string, flash?: Flash, script?: string | readonly string[]): string {
  const tabs = TABS.map(
    ([name, href, label]) =>
      `<a href="${href}" class="${name === current ? "current" : ""}" data-tab="${name}">${e(label ?? name[0]!.toUpperCase() + name.slice(1))}</a>`,
  ).join("");
  const message = flash ? `<p class="flash${flash.ok ? "" : " bad"}" id="flash" role="status">${e(flash.text)}</p>` : "";
  return layout(`${title} — Sandgate dashboard`, `<nav class="tabs">${tabs}</nav>\n${message}\n${body}`, {
    banner: "QA dashboard",
    width: "wide",
    ...(script ? { script } : {}),
  });
}

/** A table; cells must already be HTML (escape values with `e`). */
export function table(headers: string[], rows: string[][], id = ""): string {
  const head = headers.map((h) => `<th>${e(h)}</th>`).join("");
  const body = rows.length
    ? rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`).join("\n")
    : `<tr><td colspan="${headers.length}" class="hint">Nothing yet.</td></tr>`;
  return `<table${id ? ` id="${e(id)}"` : ""}><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** A one-button form posting to a dashboard action; `fields` become hidden inputs; back = where to return. */
export function postButton(
  action: string,
  label: string,
  fields: Record<string, string> = {},
  options: { back?: string; kind?: string; test?: string } = {},
): string {
  const hidden = Object.entries({ ...fields, ...(options.back ? { back: options.back } : {}) })
    .map(([n, v]) => `<input type="hidden" name="${e(n)}" value="${e(v)}">`)
    .join("");
  const test = options.test ? ` data-action="${e(options.test)}"` : "";
  return `<form method="post" action="${e(action)}" class="inline">${hidden}<button type="submit" class="small ${options.kind ?? "secondary"}"${test}>${e(label)}</button></form>`;
}

export const options = (values: string[], selected: string) =>
  values.map((v) => `<option value="${e(v)}"${v === selected ? " selected" : ""}>${e(v)}</option>`).join("");

export { e };

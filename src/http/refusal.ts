// A refusal of the whole request, in the operation's own format: XML <respon>, JSON envelope, or HTML.
import { GatewayError, type FieldProblem } from "../domain/codes.js";
import { escapeHtml } from "../base/markup.js";
import { page } from "../render/html.js";
import type { XmlNode } from "../base/markup.js";
import type { Body } from "./body.js";
import { text } from "./fields.js";
import type { Reply } from "./reply.js";
import type { Format } from "../domain/gateway-operations.js";

/** `extras`: fields a JSON refusal still carries so its shape matches a success (an empty order array, say). */
export function refuse(format: Format, err: GatewayError, body: Body, extras: Record<string, unknown> = {}): Reply {
  const base = { status: err.httpStatus, changed: false, result: err.info };
  const echo = (f: string) => text(body[f]);
  if (format === "xml") {
    const xml: XmlNode[] = [
      ["merchant_id", echo("merchant_id")],
      ["account_id", echo("account_id")],
      ["order_no", echo("order_no")],
      ["order_status", "0"],
      ["result_info", err.info],
    ];
    if (err.problems.length)
      xml.push([
        "errors",
        err.problems.map((p): XmlNode => [
          "error",
          [
            ["field", p.field],
            ["message", p.message],
          ],
        ]),
      ]);
    return { ...base, xml };
  }
  if (format === "json") {
    const json: Record<string, unknown> = {
      merchant_id: echo("merchant_id"),
      account_id: echo("account_id"),
      encryption_data: "",
      return_status: "0",
      return_message: err.info,
    };
    Object.assign(json, extras);
    if (err.problems.length) json.errors = err.problems;
    return { ...base, json };
  }
  return { ...base, html: errorPage(err.info, err.problems) };
}

function errorPage(info: string, problems: FieldProblem[]): string {
  const list = problems.map((p) => `<li><code>${escapeHtml(p.field)}</code> ${escapeHtml(p.message)}</li>`).join("");
  return page(
    "Payment request refused",
    `<h1>Payment request refused</h1><p class="error" id="result-info">${escapeHtml(info)}</p>${list ? `<ul>${list}</ul>` : ""}`,
  );
}

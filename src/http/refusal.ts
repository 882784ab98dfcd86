// A refusal of the whole request, in the operation's own format: XML <respon>, JSON envelope, or HTML.
import { GatewayError, type FieldProblem } from "../domain/codes.js";
import { escapeHtml, type XmlNode } from "../base/markup.js";
import { page } from "../render/html.js";
import { type Body } from "./body.js";
import { text } from "../domain/field-text.js";
import type { Reply } from "./reply.js";
import type { Format } from "../domain/gateway-operations.js";

/**
 * What a refusal lists under errors: its fields' problems, or, for a refusal of no one field (the
 * body, the store, an unregistered IP), one error with an empty field and the refusal's text.
 */
function problemsOf(err: GatewayError): FieldProblem[] {
  if (err.problems.length) return err.problems;
  return [{ field: "", message: err.info.slice(err.info.indexOf(":") + 1) }];
}

/** `extras`: fields a JSON refusal still carries so its shape matches a success (an empty order array, say). */
export function refuse(format: Format, err: GatewayError, body: Body, extras: Record<string, unknown> = {}): Reply {
  const base = { status: err.httpStatus, changed: false, result: err.info };
  const echo = (f: string) => text(body[f]);
  const problems = problemsOf(err);
  if (format === "xml") {
    const xml: XmlNode[] = [
      ["merchant_id", echo("merchant_id")],
      ["account_id", echo("account_id")],
      ["order_no", echo("order_no")],
      ["order_status", "0"],
      ["result_info", err.info],
    ];
    xml.push([
      "errors",
      problems.map((p): XmlNode => [
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
    json.errors = problems;
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

// The HTML of the payer pages: hosted checkout, 3-D Secure challenge, APM page, and the result.
// Every value from a request is escaped here; forms post back to the page's own address.
import { codes, resultInfo, type FieldProblem } from "../domain/codes.js";
import { catalogue } from "../domain/outcomes.js";
import { orderStatusOf } from "../domain/payment.js";
import type { Transaction } from "../domain/types.js";
import { escapeHtml as e } from "../base/markup.js";
import { layout } from "./layout.js";

/** One line of the interface document's `items`: name#,#code#,#unit price#,#quantity. */
export interface ItemLine {
  name: string;
  code: string;
  price: string;
  quantity: string;
}

export function decodeItems(items: string): ItemLine[] {
  if (!items) return [];
  return items.split("#;#").map((item) => {
    const [name = "", code = "", price = "", quantity = ""] = item.split("#,#");
    return { name, code, price, quantity };
  });
}

export interface PageContext {
  tx: Transaction;
  /** where the page's forms post */
  action: string;
  merchantName: string;
}

/** One row of a summary: label, data-field name, and the value already as HTML. */
type Row = [label: string, field: string, html: string];

/** Merchant, order and amount, then the page's own rows: one list, so the columns line up. */
const summary = ({ tx, merchantName }: Pick<PageContext, "tx" | "merchantName">, more: Row[] = []) => {
  const rows: Row[] = [
    ["Merchant", "merchant", `${e(merchantName)} (${e(tx.merchant_id)})`],
    ["Order", "order_no", e(tx.order_no)],
    ["Amount", "amount", `${e(tx.amount)} ${e(tx.currency)}`],
    ...more,
  ];
  return `<dl class="summary">\n${rows.map(([label, field, html]) => `<dt>${e(label)}</dt><dd data-field="${e(field)}">${html}</dd>`).join("\n")}\n</dl>`;
};

const button = (outcome: string, label: string, kind = "secondary") =>
  `<button type="submit" name="outcome" value="${e(outcome)}" data-outcome="${e(outcome)}" class="${kind}">${e(label)}</button>`;

/** A group of the tester panel: its heading and buttons; `apart` for what ends the payment without paying (set below the rest). */
type TesterGroup = [heading: string, buttons: string, apart?: "apart"];

const testerPanel = (action: string, intro: string, groups: TesterGroup[]) => `<section class="card tester" aria-label="Tester panel">
<h2>Tester panel</h2>
<p class="hint">${e(intro)} CI can do the same without a browser: <code>POST</code> this page's address with <code>outcome=&lt;name&gt;</code>.</p>
<form method="post" action="${e(action)}">${groups
  .map(([heading, buttons, apart]) => `<div class="tester-group${apart ? " apart" : ""}"><h3>${e(heading)}</h3><div class="buttons">${buttons}</div></div>`)
  .join("")}</form>
</section>`;

const problemList = (problems: FieldProblem[]) =>
  problems.length ? `<ul class="errors" id="card-errors">${problems.map((p) => `<li><code>${e(p.field)}</code> ${e(p.message)}</li>`).join("")}</ul>` : "";

/** The declines of the catalogue, as buttons labelled with their reason, the result code beside it. */
const declineButtons = () =>
  Object.entries(catalogue.authorise)
    .filter(([, o]) => o.state === "declined")
    .map(([name, o]) => {
      const [code, text] = resultInfo(o.result).split(/:(.*)/s) as [string, string];
      return `<button type="submit" name="outcome" value="${e(name)}" data-outcome="${e(name)}" class="secondary decline">${e(text)} <span class="code">${e(code)}</span></button>`;
    })
    .join("");

export function checkoutPage(ctx: PageContext, items: ItemLine[], problems: FieldProblem[] = [], holder = ""): string {
  const { tx, action } = ctx;
  const lines = items.length
    ? `<table class="items"><thead><tr><th>Item</th><th>Code</th><th class="num">Unit price</th><th class="num">Qty</th></tr></thead><tbody>${items
        .map((i) => `<tr><td>${e(i.name)}</td><td>${e(i.code)}</td><td class="num">${e(i.price)}</td><td class="num">${e(i.quantity)}</td></tr>`)
        .join("")}</tbody></table>`
    : `<p class="hint">No item lines were sent with this order.</p>`;
  return layout(
    "Hosted checkout — Sandgate",
    `<h1>Hosted checkout</h1>
<section class="card">${summary(ctx)}${lines}</section>
<section class="card">
<h2>Pay by card</h2>
<p class="hint">The card number decides the outcome through the active scenario, as a direct payment would (4242424242424242 approves, 4000000000000002 declines, 4000002760003184 asks for 3-D Secure).</p>
${problemList(problems)}
<form method="post" action="${e(action)}" id="card-form">
<label for="card">Card number</label><input id="card" name="card" inputmode="numeric" autocomplete="cc-number" required>
<div class="row">
<div><label for="expiration_month">Expiry month</label><input id="expiration_month" name="expiration_month" placeholder="MM" inputmode="numeric" autocomplete="cc-exp-month" required></div>
<div><label for="expiration_year">Expiry year</label><input id="expiration_year" name="expiration_year" placeholder="YYYY" inputmode="numeric" autocomplete="cc-exp-year" required></div>
<div><label for="security_code">CVC</label><input id="security_code" name="security_code" inputmode="numeric" autocomplete="cc-csc" required></div>
</div>
<label for="holder_name">Cardholder</label><input id="holder_name" name="holder_name" autocomplete="cc-name" value="${e(holder)}">
<p><button type="submit" id="pay">Pay ${e(tx.amount)} ${e(tx.currency)}</button></p>
</form>
</section>
${testerPanel(action, "Force an outcome instead of paying by card.", [
  ["Approve", button("paid", "Approve", "")],
  ["Decline", declineButtons()],
  ["3-D Secure and review", button("threeds", "Ask for a 3-D Secure challenge") + button("review", "Hold for review")],
  ["Wait", button("pending", "Leave pending")],
  ["End without paying", button("cancelled", "Cancel (the payer gives up)", "danger"), "apart"],
])}`,
    { banner: "hosted checkout" },
  );
}

export function threeDsPage(ctx: PageContext): string {
  return layout(
    "3-D Secure challenge — Sandgate",
    `<h1>3-D Secure verification</h1>
<section class="card">
<p>The card's issuer asks the payer to confirm this payment. In this sandbox the verification code is <code id="documented-code">${e(catalogue.completion.threeds_code)}</code>; any other code fails the challenge.</p>
${summary(ctx, [["Card", "card", e(ctx.tx.card_masked || "—")]])}
<form method="post" action="${e(ctx.action)}" id="challenge-form">
<label for="challenge_code">Verification code</label>
<div class="row"><input id="challenge_code" name="challenge_code" inputmode="numeric" autocomplete="one-time-code" required><button type="submit" id="submit-code" class="shrink">Submit code</button></div>
</form>
</section>
${testerPanel(ctx.action, "Pass, fail or abandon the challenge.", [
  ["The challenge", button("threeds_passed", "Pass", "") + button("threeds_failed", "Fail")],
  ["End without paying", button("abandoned", "Abandon (the payer gives up)", "danger"), "apart"],
])}`,
    { banner: "3-D Secure challenge" },
  );
}

export function apmPage(ctx: PageContext, methodLabel: string): string {
  return layout(
    `${methodLabel} — Sandgate`,
    `<h1>${e(methodLabel)}</h1>
<section class="card">
<p class="hint">The payer's ${e(methodLabel)} page: say what the payer did.</p>
${summary(ctx, [["Payment method", "payment_method", e(ctx.tx.payment_method)]])}
</section>
${testerPanel(ctx.action, "Each button ends the payment the way the payment method would.", [
  ["Paid", button("paid", "Paid", "")],
  ["Not paid", button("failed", "Failed") + button("expired", "Expired")],
  ["Wait", button("pending", "Leave pending")],
  ["End without paying", button("cancelled", "Cancelled (the payer gives up)", "danger"), "apart"],
])}`,
    { banner: "payment method page" },
  );
}

const STATUS_WORDS: Record<string, [string, string]> = {
  [codes.order_status.success]: ["Payment approved", "ok"],
  [codes.order_status.failure]: ["Payment not completed", "bad"],
  [codes.order_status.pending]: ["Payment pending", "wait"],
  [codes.order_status.review]: ["Payment held for review", "wait"],
};

/** The payment as it stands: after the payer acted (no return_url) or when a finished page is opened again. */
export function resultPage(ctx: Pick<PageContext, "tx" | "merchantName">, returnUrl: string, note = ""): string {
  const { tx } = ctx;
  const status = orderStatusOf(tx.state);
  const [title, kind] = STATUS_WORDS[status] ?? ["Payment", ""];
  const back = returnUrl
    ? `<p><a id="return-link" href="${e(returnUrl)}">Return to the merchant</a></p>`
    : `<p class="hint">The payment request had no return_url, so the payer stays here.</p>`;
  return layout(
    `${title} — Sandgate`,
    `<h1>${e(title)}</h1>
${note ? `<p class="flash">${e(note)}</p>` : ""}
<section class="card">
${summary(ctx, [
  ["Transaction", "transaction_id", `<span class="mono">${e(tx.transaction_id)}</span>`],
  ["order_status", "order_status", `<span class="status ${kind}">${e(status)}</span>`],
  ["result_info", "result_info", e(resultInfo(tx.result))],
  ["payment_status", "payment_status", e(codes.payment_status[tx.state])],
])}
${back}
</section>`,
    { banner: "payment result" },
  );
}

export function problemPage(title: string, message: string, details: string[] = []): string {
  const list = details.length ? `<ul>${details.map((d) => `<li><code>${e(d)}</code></li>`).join("")}</ul>` : "";
  return layout(`${title} — Sandgate`, `<h1>${e(title)}</h1><section class="card"><p class="error" id="problem">${e(message)}</p>${list}</section>`, {
    banner: "payer page",
  });
}

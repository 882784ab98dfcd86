// The dashboard's Playground tab: forms that make a payment as a merchant would (a card payment, a
// hosted checkout, an APM payment), and the result of one with its links (the transaction's page,
// the payer page it waits at). dashboard/playground.ts sends the forms to the gateway.
import { ruleShown } from "../base/words.js";
import { resultInfo, type PaymentState } from "../domain/codes.js";
import { orderStatusOf } from "../domain/payment.js";
import { paidWith, type Stage } from "../domain/completion.js";
import type { Exchange, RequestLogEntry } from "../store/request-log.js";
import type { Merchant, Transaction } from "../domain/types.js";
import { statusBadge } from "./transactions.js";
import { BASE, e, frame, type Flash } from "./frame.js";

export const PLAYGROUND_KINDS = ["card", "checkout", "apm"] as const;
export type PlaygroundKind = (typeof PLAYGROUND_KINDS)[number];

/** The form's fields: the gateway's own names, and `outcome` (sent as X-Sandbox-Outcome). */
export const PLAYGROUND_FIELDS = [
  "merchant_id",
  "account_id",
  "amount",
  "currency",
  "card",
  "expiration_month",
  "expiration_year",
  "security_code",
  "payment_method",
  "outcome",
  "order_no",
  "return_url",
  "notify_url",
] as const;
export type PlaygroundValues = Record<(typeof PLAYGROUND_FIELDS)[number], string>;

export interface PlaygroundData {
  merchants: readonly Merchant[];
  /** the outcome names each form offers (X-Sandbox-Outcome's, per operation) */
  outcomes: Record<PlaygroundKind, readonly string[]>;
  /** card numbers the global scenario's rules name, with the outcome each gets */
  testCards: { card: string; outcome: string }[];
  scenario: string;
  paymentMethods: string[];
  /** what each form shows: its defaults, or what was sent when the gateway refused it */
  values: Record<PlaygroundKind, PlaygroundValues>;
  /** the refusal of the form sent, shown in that form */
  error?: { kind: PlaygroundKind; message: string };
}

const FORMS: Record<PlaygroundKind, { title: string; button: string; intro: string; noOutcome: string }> = {
  card: {
    title: "Card payment",
    button: "Pay",
    intro:
      "<code>POST /v1/authorise</code> with card data. The scenario in force decides by the card (in <code>default</code>: 4242 4242 4242 4242 approves, 4000 0000 0000 0002 declines), unless you name an outcome. A named outcome without a card number pays with 4242 4242 4242 4242.",
    noOutcome: "— the card and scenario decide —",
  },
  checkout: {
    title: "Hosted checkout",
    button: "Start checkout",
    intro:
      "<code>POST /v1/checkout</code>: the payment waits while the payer enters a card at Sandgate's hosted checkout page. A named outcome ends the payment whatever card the payer enters.",
    noOutcome: "— the payer's card decides —",
  },
  apm: {
    title: "APM payment",
    button: "Start APM payment",
    intro:
      "<code>POST /v1/authorise</code> with <code>payment_method</code>: the payment waits until the payer chooses how it ends at the APM page, unless a rule or a named outcome decides now.",
    noOutcome: "— the payer decides —",
  },
};

const field = (id: string, label: string, input: string) => `<div><label for="${e(id)}">${e(label)}</label>${input}</div>`;
const textInput = (id: string, name: string, value: string, extra = "") => `<input id="${e(id)}" name="${e(name)}" value="${e(value)}"${extra}>`;
const select = (id: string, name: string, choices: [string, string][], selected: string) =>
  `<select id="${e(id)}" name="${e(name)}">${choices.map(([v, label]) => `<option value="${e(v)}"${v === selected ? " selected" : ""}>${e(label)}</option>`).join("")}</select>`;

function merchantFields(kind: PlaygroundKind, d: PlaygroundData, v: PlaygroundValues): string {
  const merchants = d.merchants.map((m): [string, string] => [m.merchant_id, `${m.merchant_id} · ${m.name}`]);
  // a merchant id not offered (sent by hand) stays visible, so the error beside it makes sense
  if (v.merchant_id && !d.merchants.some((m) => m.merchant_id === v.merchant_id)) merchants.push([v.merchant_id, v.merchant_id]);
  const groups = d.merchants
    .map(
      (m) =>
        `<optgroup label="${e(`${m.merchant_id} · ${m.name}`)}" data-merchant="${e(m.merchant_id)}">${m.accounts.map((a) => `<option value="${e(a.account_id)}" title="${e(`${a.account_name}: ${a.payment_methods.join(", ")}`)}"${a.account_id === v.account_id ? " selected" : ""}>${e(`${a.account_id} · ${methodsShown(a.payment_methods)}`)}</option>`).join("")}</optgroup>`,
    )
    .join("");
  const known = d.merchants.some((m) => m.accounts.some((a) => a.account_id === v.account_id));
  const other = v.account_id && !known ? `<option value="${e(v.account_id)}" selected>${e(v.account_id)}</option>` : "";
  return `${field(`${kind}-merchant`, "Merchant", select(`${kind}-merchant`, "merchant_id", merchants, v.merchant_id))}
${field(`${kind}-account`, "Account (of that merchant)", `<select id="${kind}-account" name="account_id">${groups}${other}</select>`)}
<div class="row">
${field(`${kind}-amount`, "Amount", textInput(`${kind}-amount`, "amount", v.amount, ' inputmode="decimal" placeholder="10.00"'))}
${field(`${kind}-currency`, "Currency", textInput(`${kind}-currency`, "currency", v.currency, ' maxlength="3" placeholder="USD"'))}
</div>`;
}

function kindFields(kind: PlaygroundKind, d: PlaygroundData, v: PlaygroundValues): string {
  if (kind === "card") {
    return `${field("card-card", "Card number", textInput("card-card", "card", v.card, ' inputmode="numeric" autocomplete="off" list="test-cards" placeholder="4242 4242 4242 4242"'))}
<div class="row tight">
${field("card-month", "Exp. month", textInput("card-month", "expiration_month", v.expiration_month, ' inputmode="numeric" maxlength="2"'))}
${field("card-year", "Exp. year", textInput("card-year", "expiration_year", v.expiration_year, ' inputmode="numeric" maxlength="4"'))}
${field("card-cvc", "CVC", textInput("card-cvc", "security_code", v.security_code, ' inputmode="numeric" maxlength="4" autocomplete="off"'))}
</div>`;
  }
  if (kind === "apm") return field("apm-method", "Payment method", textInput("apm-method", "payment_method", v.payment_method, ' list="payment-methods"'));
  return "";
}

function paymentForm(kind: PlaygroundKind, d: PlaygroundData): string {
  const f = FORMS[kind];
  const v = d.values[kind];
  const outcomes = [["", f.noOutcome] as [string, string], ...d.outcomes[kind].map((o): [string, string] => [o, o])];
  const error = d.error?.kind === kind ? `<div class="flash bad" id="playground-error" role="alert">${e(d.error.message)}</div>` : "";
  return `<section class="card" id="playground-${kind}">
<h2>${e(f.title)}</h2>
<p class="hint">${f.intro}</p>
${error}
<form method="post" action="${BASE}/ui/playground" data-playground>
<input type="hidden" name="kind" value="${kind}">
${merchantFields(kind, d, v)}
${kindFields(kind, d, v)}
${field(`${kind}-outcome`, "Outcome (X-Sandbox-Outcome)", select(`${kind}-outcome`, "outcome", outcomes, v.outcome))}
<details${v.order_no || v.notify_url || v.return_url ? " open" : ""}><summary>More fields</summary>
${field(`${kind}-order`, "order_no (empty: a new one)", textInput(`${kind}-order`, "order_no", v.order_no, ' maxlength="64"'))}
${field(`${kind}-return`, "return_url (empty: back to this playground)", textInput(`${kind}-return`, "return_url", v.return_url, ' type="url"'))}
${field(`${kind}-notify`, "notify_url (empty: no notification)", textInput(`${kind}-notify`, "notify_url", v.notify_url, ' type="url"'))}
</details>
<p><button type="submit" id="playground-${kind}-submit">${e(f.button)}</button></p>
</form>
</section>`;
}

/** An account's methods as its option says them: three at most, the rest counted (all of them in its title), so the list fits its column. */
const methodsShown = (methods: string[]) => (methods.length > 3 ? `${methods.slice(0, 3).join(", ")} +${methods.length - 3}` : methods.join(", "));

export function playgroundPage(d: PlaygroundData): string {
  const cards = d.testCards.map((c) => `<option value="${e(c.card)}">${e(c.outcome)}</option>`).join("");
  const methods = d.paymentMethods.map((m) => `<option value="${e(m)}">`).join("");
  return frame(
    "Playground",
    "playground",
    `<h1>Playground</h1>
<p class="hint">Pay as a merchant's server would, from this browser. Each form sends a real gateway request, signed with the merchant's secret key, through the same path as any merchant's: the scenario in force (<code>${e(d.scenario)}</code> unless the merchant is bound to another) or the outcome you name decides; the payment is stored, notified and shown under Transactions and Requests.</p>
<div class="grid2">
${PLAYGROUND_KINDS.map((kind) => paymentForm(kind, d)).join("\n")}
</div>
<datalist id="test-cards">${cards}</datalist>
<datalist id="payment-methods">${methods}</datalist>`,
    undefined,
    "playground.js",
  );
}

export interface PlaygroundResult {
  tx: Transaction;
  /** the page the payment waits at, and its address ("" when it waits at none) */
  stage: Stage | undefined;
  payerPage: string;
  /** the request that made the payment, and what went over the wire (while the request log keeps it) */
  request: RequestLogEntry | undefined;
  exchange: Exchange | undefined;
  /** the payer came back to the playground's return_url: what the return said, and whether its signature holds */
  returned?: { order_status: string; signatureValid: boolean };
}

const HEADLINES: Record<PaymentState, string> = {
  pending: "Waiting for the payer",
  authorised: "Approved (authorised)",
  review: "Held for review",
  paid: "Approved (paid)",
  partially_refunded: "Partially refunded",
  refunded: "Refunded",
  cancelled: "Cancelled",
  declined: "Declined",
};

export function playgroundResultPage(r: PlaygroundResult): string {
  const { tx } = r;
  const txHref = `${BASE}/ui/transactions/${encodeURIComponent(tx.transaction_id)}`;
  const last = tx.history?.at(-1);
  const payer = r.stage
    ? `<section class="card tester" id="payer-step"><h2>Now as the payer</h2>
<p>The payment waits at its ${e(r.stage)} page. Open it to pay, or to end the payment as the payer would.</p>
<p><a class="button" id="open-payer-page" href="${e(r.payerPage)}">Open the payer page</a></p>
<p class="hint">${tx.return_url ? `Afterwards the payer is sent to the return_url, <span class="mono">${e(tx.return_url)}</span>.` : "The payment has no return_url: the payer page shows the result itself."}</p></section>`
    : "";
  const answer = r.exchange
    ? `<details id="gateway-answer"><summary>The gateway's answer: HTTP ${e(r.exchange.status)}, ${e(r.exchange.responseType)}</summary><pre>${e(r.exchange.responseBody)}</pre></details>`
    : "";
  const request = r.request
    ? `<dt>Request</dt><dd><a href="${BASE}/ui/requests?merchant_id=${encodeURIComponent(tx.merchant_id)}">${e(r.request.id)}</a>: ${e(r.request.operation)} ${e(r.request.path)}, HTTP <span id="http-status">${e(r.request.http_status)}</span>, signature ${r.request.signature?.matched ? "matched" : "not matched"}</dd>`
    : "";
  const flash: Flash | undefined = r.returned && {
    ok: r.returned.signatureValid,
    text: `The payer came back to the return_url with order_status ${r.returned.order_status}; the return's signature is ${r.returned.signatureValid ? "valid" : "NOT valid"}.`,
  };
  return frame(
    `Payment ${tx.transaction_id}`,
    "playground",
    `<h1 id="outcome">${e(HEADLINES[tx.state])}</h1>
<section class="card" id="playground-result"><dl class="summary">
<dt>Transaction</dt><dd><a id="transaction-link" class="mono" href="${txHref}">${e(tx.transaction_id)}</a> (open it in the dashboard: history, notifications, forced steps)</dd>
<dt>payment_status</dt><dd id="tx-status">${statusBadge(tx.state)}</dd>
<dt>order_status</dt><dd id="order-status">${e(orderStatusOf(tx.state))}</dd>
<dt>result_info</dt><dd id="result-info">${e(resultInfo(tx.result))}</dd>
<dt>Decided by</dt><dd><code id="rule">${e(ruleShown(last?.rule ?? ""))}</code> <span class="hint">(${e(last?.event ?? "")}, by ${e(last?.source ?? "")})</span></dd>
<dt>Merchant / account</dt><dd>${e(tx.merchant_id)} / ${e(tx.account_id)}</dd>
<dt>order_no</dt><dd>${e(tx.order_no)}</dd>
<dt>Amount</dt><dd>${e(tx.amount)} ${e(tx.currency)}</dd>
<dt>Paid with</dt><dd id="paid-with">${e(paidWith(tx) ?? (r.stage === "checkout" ? "not chosen yet: the payer chooses at the checkout page" : "—"))}</dd>
${request}
</dl>
${answer}</section>
${payer}
<p><a href="${BASE}/ui/playground" id="another">Make another payment</a> · <a href="${txHref}">Open the transaction</a></p>`,
    flash,
  );
}

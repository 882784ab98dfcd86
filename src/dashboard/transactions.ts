// The dashboard's transactions: the filtered list, newest first, and one transaction with its
// history, refunds, subscription, notifications, requests and the forced steps it allows.
import { codes, resultInfo, type PaymentState } from "../domain/codes.js";
import { paidWith, type CompletionChoice, type CompletionGroup, type Stage } from "../domain/completion.js";
import type { RequestLogEntry } from "../store/request-log.js";
import type { Notification, Refund, Subscription, Transaction } from "../domain/types.js";
import type { ClockReading } from "../admin/clock-moves.js";
import { durationText } from "../base/words.js";
import { BASE, e, frame, options, postButton, table, type Flash } from "./frame.js";
import { formPath } from "../api/operator-calls.js";
import { PORTAL_CALLS, type PortalAction } from "../api/calls/portal-calls.js";
import { counted, ruleShown } from "../base/words.js";

export interface TransactionFilter {
  merchant_id: string;
  order_no: string;
  status: string;
}

const STATES = Object.keys(codes.payment_status) as PaymentState[];

export const statusBadge = (state: PaymentState) => {
  const kind = state === "declined" || state === "cancelled" ? "bad" : state === "pending" || state === "review" ? "wait" : "ok";
  return `<span class="status ${kind}">${e(codes.payment_status[state])} ${e(state)}</span>`;
};

const txLink = (id: string) => `<a href="${BASE}/ui/transactions/${encodeURIComponent(id)}" class="mono">${e(id)}</a>`;

export function transactionsPage(
  list: Transaction[],
  filter: TransactionFilter,
  total: number,
  merchants: string[],
  clocks: ClockReading[],
  flash?: Flash,
): string {
  // each row is dated by its merchant's own clock: say which run on one of their own
  const own = clocks.map((c) => `<code>${e(c.merchant_id ?? "")}</code> ${e(durationText(c.offset_ms))} ahead${c.frozen ? " (frozen)" : ""}`);
  const dated = own.length ? ` Each is dated by its merchant's clock: ${own.join(", ")} of real time.` : "";
  const rows = list.map((t) => [
    e(t.created_at.replace("T", " ").slice(0, 19)),
    `<code>${e(t.merchant_id)}</code>`,
    e(t.order_no),
    txLink(t.transaction_id),
    e(t.kind),
    `${e(t.amount)} ${e(t.currency)}`,
    statusBadge(t.state),
    e(resultInfo(t.result)),
  ]);
  return frame(
    "Transactions",
    "transactions",
    `<h1>Transactions</h1>
<form method="get" action="${BASE}/ui/transactions" class="card row" id="filter">
<div><label for="f-merchant">Merchant</label><input id="f-merchant" name="merchant_id" list="known-merchants" value="${e(filter.merchant_id)}"></div>
<div><label for="f-order">order_no</label><input id="f-order" name="order_no" value="${e(filter.order_no)}"></div>
<div><label for="f-status">Status</label><select id="f-status" name="status"><option value="">any</option>${options(STATES, filter.status)}</select></div>
<div class="shrink"><button type="submit" id="apply-filter">Filter</button> <a href="${BASE}/ui/transactions">Clear</a></div>
<datalist id="known-merchants">${merchants.map((m) => `<option value="${e(m)}">`).join("")}</datalist>
</form>
<p class="hint" id="list-dates">${e(list.length)} of ${e(total)} shown, newest first.${dated}</p>
<section class="card">${table(["Created", "Merchant", "order_no", "Transaction", "Kind", "Amount", "payment_status", "Result"], rows, "transactions")}</section>`,
    flash,
  );
}

/** The merchant portal's actions a payment allows in its state (admin/portal.ts decides them from the transitions table). */
interface PortalOffer {
  actions: readonly ("capture" | "cancel" | "refund" | "review")[];
  /** what is left to refund, prefilled */
  refundable: string;
}

export interface TransactionDetail {
  tx: Transaction;
  portal: PortalOffer;
  stage: Stage | undefined;
  /** what the page it waits at can end in, in words (domain/completion.ts completionChoices) */
  completion: { group: CompletionGroup; choices: CompletionChoice[] }[];
  refunds: Refund[];
  subscription: Subscription | undefined;
  notifications: Notification[];
  requests: RequestLogEntry[];
  pageUrl: string;
}

export function transactionPage(d: TransactionDetail, flash?: Flash): string {
  const { tx } = d;
  const back = `${BASE}/ui/transactions/${encodeURIComponent(tx.transaction_id)}`;
  const complete = d.stage
    ? `<section class="card tester" id="complete"><h2>Complete this pending payment</h2>
<p class="hint">It waits at its ${e(d.stage)} page (<a href="${e(d.pageUrl)}">open it as the payer</a>). Each button does what the payer's choice would: return result, notification, subscription. Beside each, the result_info it gives.</p>
${d.completion
  .map(
    ({ group, choices }) =>
      `<div class="completion-group"><h3>${e(group)}</h3><div class="buttons">${choices
        .map(
          (c) =>
            `<span class="choice">${postButton(`${formPath("completePayment", { transaction_id: tx.transaction_id })}`, c.name, { outcome: c.name }, { back, test: `complete-${c.name}` })}<span class="hint">${e(c.result_info)}${c.also.length ? ` (also ${e(c.also.join(", "))})` : ""}</span></span>`,
        )
        .join("")}</div></div>`,
  )
  .join("")}</section>`
    : "";
  const portal = portalSection(tx, d.portal, back);
  const history = (tx.history ?? []).map((h) => [
    e(h.at.replace("T", " ").slice(0, 19)),
    e(h.event),
    e(h.payment_status),
    e(h.result),
    `<code>${e(ruleShown(h.rule))}</code>`,
    e(h.source),
    e(h.request_id ?? ""),
  ]);
  const refunds = d.refunds.map((r) => [
    `<code>${e(r.refund_reference_id)}</code>`,
    `${e(r.refund_amount)} ${e(r.currency)}`,
    r.refund_reason ? e(r.refund_reason) : `<span class="hint">—</span>`,
    e(r.state),
    e(r.refund_date.replace("T", " ").slice(0, 19)),
    e(r.refund_processing_date.replace("T", " ").slice(0, 19)),
    r.state === "accepted"
      ? postButton(
          `${formPath("settleRefund", { ref: r.refund_reference_id })}`,
          "Settle: processed",
          { result: "processed" },
          { back, test: `settle-processed-${r.refund_reference_id}` },
        ) +
        postButton(
          `${formPath("settleRefund", { ref: r.refund_reference_id })}`,
          "Settle: failed",
          { result: "failed" },
          { back, kind: "danger", test: `settle-failed-${r.refund_reference_id}` },
        )
      : "",
  ]);
  const sub = d.subscription;
  const subscription = sub
    ? `<section class="card" id="subscription"><h2>Subscription <code>${e(sub.recurring_id)}</code></h2>
<p>recurring_status ${e(codes.recurring_status[sub.state])} (${e(sub.state)}), ${e(counted(sub.deductions, "charge"))} made, next due ${e(sub.next_deduction_at)}.</p>
${sub.state === "active" ? postButton(`${formPath("chargeSubscription", { recurring_id: sub.recurring_id })}`, "Charge the next deduction now", {}, { back, kind: "", test: "charge-now" }) : ""}</section>`
    : "";
  return frame(
    `Transaction ${tx.transaction_id}`,
    "transactions",
    `<h1>Transaction <code>${e(tx.transaction_id)}</code></h1>
<section class="card"><dl class="summary">
<dt>Merchant / account</dt><dd>${e(tx.merchant_id)} / ${e(tx.account_id)}</dd>
<dt>order_no</dt><dd>${e(tx.order_no)}</dd>
<dt>Kind</dt><dd>${e(tx.kind)}${paidWith(tx) && tx.payment_method ? ` (${e(tx.payment_method)})` : ""}</dd>
<dt>Amount</dt><dd>${e(tx.amount)} ${e(tx.currency)} · captured ${e(tx.captured_amount)} · refunded ${e(tx.refunded_amount)}</dd>
<dt>payment_status</dt><dd id="tx-status">${statusBadge(tx.state)}</dd>
<dt>result_info</dt><dd>${e(resultInfo(tx.result))}</dd>
<dt>Card</dt><dd>${e(tx.card_masked || "—")}</dd>
<dt>3-D Secure</dt><dd>${e(tx.threeds_result || "—")}</dd>
<dt>Risk</dt><dd>${e(tx.risk_action)} (${e(tx.risk_score)})</dd>
<dt>notify_url</dt><dd>${e(tx.notify_url || "—")}</dd>
<dt>return_url</dt><dd>${e(tx.return_url || "—")}</dd>
</dl></section>
${complete}
${portal}
<section class="card"><h2>History</h2>${table(["At", "What", "payment_status", "Result", "Rule", "By", "Request"], history, "history")}</section>
<section class="card"><h2>Refunds</h2>${table(["Reference", "Amount", "Reason", "State", "Requested", "Settled", ""], refunds, "refunds")}</section>
${subscription}
<section class="card"><h2>Notifications</h2>${notificationsTable(d.notifications, back)}</section>
<section class="card"><h2>Requests for this order</h2>${requestsTable(d.requests)}</section>`,
    flash,
  );
}

/**
 * The merchant portal: the actions the payment's state allows, each a form with its amount prefilled
 * and editable, sent as the merchant's own request (the answer's message comes back in the flash).
 */
function portalSection(tx: Transaction, offer: PortalOffer, back: string): string {
  const action = (name: PortalAction) => formPath(PORTAL_CALLS[name], { transaction_id: tx.transaction_id });
  const backField = `<input type="hidden" name="back" value="${e(back)}">`;
  const forms = offer.actions.map((a) => {
    switch (a) {
      case "capture":
        return `<form method="post" action="${e(action("capture"))}" class="row" id="portal-capture">${backField}
<div><label for="capture-amount">Capture (${e(tx.currency)})</label><input id="capture-amount" name="amount" value="${e(tx.amount)}" inputmode="decimal" required></div>
<div class="shrink"><button type="submit" data-action="capture">Capture</button></div></form>`;
      case "cancel":
        return `<form method="post" action="${e(action("cancel"))}" class="row" id="portal-cancel">${backField}<div class="shrink"><button type="submit" class="danger" data-action="cancel">Cancel the payment</button></div></form>`;
      case "refund":
        return `<form method="post" action="${e(action("refund"))}" class="row" id="portal-refund">${backField}
<div><label for="refund-amount">Refund (${e(tx.currency)})</label><input id="refund-amount" name="amount" value="${e(offer.refundable)}" inputmode="decimal" required></div>
<div><label for="refund-reason">Reason</label><input id="refund-reason" name="reason" maxlength="256" placeholder="customer returned the goods"></div>
<div class="shrink"><button type="submit" data-action="refund">Refund</button></div></form>`;
      case "review":
        return `<div class="buttons" id="portal-review">${postButton(action("review"), "Approve", { decision: "approve" }, { back, kind: "", test: "review-approve" })}${postButton(action("review"), "Reject", { decision: "reject" }, { back, kind: "danger", test: "review-reject" })}</div>`;
    }
  });
  // what ends the payment stands apart, below what moves it on: a click meant for Capture never lands on it
  const ending = offer.actions.includes("cancel")
    ? `<div class="apart" id="portal-ending"><p class="hint">Ends the payment: a cancelled authorisation can no longer be captured.</p>${forms[offer.actions.indexOf("cancel")]}</div>`
    : "";
  const moving = forms.filter((_, i) => offer.actions[i] !== "cancel").join("\n");
  const offered = forms.length
    ? `${moving}\n${ending}`
    : `<p class="hint">Nothing: a payment that is ${e(tx.state)} takes no capture, cancel, refund or review.</p>`;
  return `<section class="card" id="portal"><h2>Merchant portal</h2>
<p class="hint">What the merchant may do to this payment by hand now. Each is the merchant's own gateway request (History says <em>portal</em>): the same rules, scenario, notifications and request log as one from its server, and the gateway's message when it refuses.</p>
${offered}</section>`;
}

/** A probe's verdict on the receiver's answer, and what a correct receiver answers (receiver-check/probes.ts), by notification id. */
export type ProbeVerdicts = ReadonlyMap<string, { verdict: "pass" | "warning" | "fail"; expects: string }>;

/** What a probe's receiver answered, and the check's verdict on it. */
function probeState(n: Notification, verdicts: ProbeVerdicts): string {
  const last = n.attempts.at(-1);
  const answered = !last ? "not sent yet" : last.http_status === null ? `no answer (${last.error})` : `answered HTTP ${last.http_status}`;
  const judged = last ? verdicts.get(n.notification_id) : undefined;
  const verdict = judged
    ? ` <span class="status ${judged.verdict === "pass" ? "ok" : judged.verdict === "fail" ? "bad" : "wait"}">${e(judged.verdict)}</span> <span class="hint">(expects: ${e(judged.expects)})</span>`
    : "";
  return `<span class="status wait">probe</span> <span class="hint">${e(answered)}</span>${verdict}`;
}

/**
 * Notifications with every attempt, and a resend button each. A receiver check's probe (a forged,
 * tampered or malformed notification the receiver should refuse) is shown as a probe with what the
 * receiver answered, never as a failure, and is not resent.
 */
export function notificationsTable(list: Notification[], back: string, verdicts: ProbeVerdicts = new Map()): string {
  const rows = list.map((n) => {
    const attempts = n.attempts.length
      ? `<details><summary>${e(counted(n.attempts.length, "attempt"))}</summary>${n.attempts
          .map(
            (a) =>
              `<div>#${e(a.attempt)} ${e(a.at)} ${e(a.reason)}${a.via ? " through sandgate listen" : ""}: ${a.http_status === null ? e(a.error) : `HTTP ${e(a.http_status)}`} (${e(a.duration_ms)} ms)${a.response_body ? `<pre>${e(a.response_body)}</pre>` : ""}</div>`,
          )
          .join("")}</details>`
      : `<span class="hint">none yet</span>`;
    return [
      e(n.created_at.replace("T", " ").slice(0, 19)),
      `<code>${e(n.merchant_id)}</code>`,
      e(n.event) + (n.check ? `<div class="hint">receiver check ${e(n.check)}: ${e(n.probe ?? "")}</div>` : ""),
      `<span class="mono">${e(n.url)}</span>`,
      n.check ? probeState(n, verdicts) : e(n.state) + (n.error ? `<div class="hint">${e(n.error)}</div>` : ""),
      attempts,
      n.check
        ? `<a href="${BASE}/ui/notifications?check=${encodeURIComponent(n.check)}">the check's probes</a>`
        : postButton(`${formPath("resendNotification", { id: n.notification_id })}`, "Resend", {}, { back, test: `resend-${n.notification_id}` }),
    ];
  });
  return table(["Created", "Merchant", "Event", "URL", "State", "Attempts", ""], rows, "notifications");
}

/** Request log rows (the requests page's script renders the same columns live). */
export function requestsTable(list: RequestLogEntry[]): string {
  const rows = list.map((r) => [
    e(r.at.replace("T", " ").slice(0, 19)),
    e(r.operation),
    `<code>${e(r.merchant_id)}</code>`,
    e(r.order_no),
    e(r.http_status),
    e(r.result) + (r.note ? `<div class="hint">${e(r.note)}</div>` : ""),
    `<code>${e(ruleShown(r.rule))}</code>`,
    r.signature
      ? `<details><summary class="${r.signature.matched ? "sig-ok" : "sig-bad"}">${r.signature.matched ? "matched" : "mismatched"}</summary><div>expected <code>${e(r.signature.expected)}</code></div><div>received <code>${e(r.signature.received)}</code></div><div>signing string (key masked)</div><pre>${e(r.signature.signingString)}</pre></details>`
      : `<span class="hint">—</span>`,
  ]);
  return table(["At", "Operation", "Merchant", "order_no", "HTTP", "Result", "Rule", "Signature"], rows, "requests");
}

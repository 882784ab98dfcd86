// The dashboard's other lists: the live request log, notifications, payouts, subscriptions.
import { ruleShown } from "../base/words.js";
import { codes } from "../domain/codes.js";
import { EXCHANGES_KEPT, type RequestLogEntry } from "../store/request-log.js";
import type { Notification, Payout, Subscription } from "../domain/types.js";
import { BASE, e, frame, options, postButton, table, type Flash } from "./frame.js";
import { notificationsTable, requestsTable, type ProbeVerdicts } from "./transactions.js";
import { formPath, callPath } from "../api/operator-calls.js";

/** The request log's filters as the page's form shows them (every value as typed). */
export interface RequestsFilterView {
  merchant_id: string;
  operation: string;
  http_status: string;
  since: string;
  until: string;
}

const OPERATION_NAMES = [
  "authorise",
  "checkout",
  "retrievalTrans",
  "retrievalRefund",
  "capture",
  "review",
  "cancel",
  "refund",
  "payout",
  "subscriptionCancel",
  "paymentMethodsOptimise",
];

export function requestsPage(list: RequestLogEntry[], f: RequestsFilterView, problem?: string): string {
  const query = new URLSearchParams(Object.entries(f).filter(([, v]) => v !== "")).toString();
  const field = (name: keyof RequestsFilterView, label: string, hint: string, extra = "") =>
    `<div><label for="r-${name}">${label}</label><input id="r-${name}" name="${name}" value="${e(f[name])}" placeholder="${e(hint)}"${extra}></div>`;
  return frame(
    "Request log",
    "requests",
    `<h1>Request log</h1>
<form method="get" action="${BASE}/ui/requests" class="card row">
${field("merchant_id", "Merchant", "M10001")}
${field("operation", "Operation", "authorise", ' list="r-operations"')}<datalist id="r-operations">${OPERATION_NAMES.map((o) => `<option value="${o}">`).join("")}</datalist>
${field("http_status", "HTTP status", "200, 4xx")}
${field("since", "Since", "2026-11-24T10:00:00Z")}
${field("until", "Until", "2026-11-24T11:00:00Z")}
<div class="shrink"><button type="submit">Filter</button></div>
</form>
<p class="hint">Newest first; updates by itself every second (<span id="live-state">live</span>). Open a signature to see the string Sandgate expected to be signed. <a href="${callPath("exportRequestsHar")}${query ? `?${e(query)}` : ""}" download data-test="har">Export these as HAR</a> (bodies and answers of ${EXCHANGES_KEPT}; opens in browsers' dev tools and API clients).</p>
<section class="card" id="request-log" data-endpoint="${callPath("listRequests")}" data-query="${e(query)}">${requestsTable(list)}</section>`,
    problem ? { ok: false, text: problem } : undefined,
    "dashboard.js",
  );
}

/** `check`: only that receiver check's notifications are listed (?check=<id>). */
/** `probes`: receiver-check probes shown too; `hidden`: how many were left out. */
export function notificationsPage(
  list: Notification[],
  flash?: Flash,
  check = "",
  shown: { probes: boolean; hidden: number } = { probes: true, hidden: 0 },
  verdicts?: ProbeVerdicts,
): string {
  const back = `${BASE}/ui/notifications${check ? `?check=${encodeURIComponent(check)}` : shown.probes ? "?probes=1" : ""}`;
  const toggle = shown.probes
    ? ` Receiver-check probes shown. <a href="${BASE}/ui/notifications" id="toggle-probes">Hide them</a>`
    : shown.hidden
      ? ` ${e(shown.hidden)} receiver-check probe${shown.hidden === 1 ? "" : "s"} hidden. <a href="${BASE}/ui/notifications?probes=1" id="toggle-probes">Show them</a>`
      : "";
  const which = check
    ? ` Receiver check <code id="notifications-check">${e(check)}</code> only: the notifications its probes sent. <a href="${BASE}/ui/notifications">Show all</a>`
    : toggle;
  return frame(
    "Notifications",
    "notifications",
    `<h1>Notifications</h1><p class="hint">Newest first, with every delivery attempt.${which}</p><section class="card">${notificationsTable(list, back, verdicts)}</section>`,
    flash,
  );
}

export function payoutsPage(list: Payout[], flash?: Flash): string {
  const back = `${BASE}/ui/payouts`;
  const rows = list.map((p) => [
    e(p.created_at.replace("T", " ").slice(0, 19)),
    `<code>${e(p.merchant_id)}</code>`,
    `<span class="mono">${e(p.transaction_id)}</span>`,
    `${e(p.amount_beneficiary_receives)} ${e(p.request.payment_currency ?? "")}`,
    e(p.status) + (p.failure_type ? ` <span class="hint">${e(p.failure_type)}</span>` : ""),
    `<code>${e(ruleShown(p.rule))}</code>`,
    p.status === "PENDING"
      ? postButton(
          `${formPath("completePayout", { transaction_id: p.transaction_id })}`,
          "Complete",
          {},
          { back, kind: "", test: `payout-complete-${p.transaction_id}` },
        ) +
        `<form method="post" action="${formPath("failPayout", { transaction_id: p.transaction_id })}" class="inline"><input type="hidden" name="back" value="${back}"><select name="failure_type" aria-label="failure type">${options(codes.payout_failure_types, "UNKNOWN")}</select> <button type="submit" class="small danger" data-action="payout-fail-${e(p.transaction_id)}">Fail</button></form>`
      : "",
  ]);
  return frame(
    "Payouts",
    "payouts",
    `<h1>Payouts</h1><section class="card">${table(["Created", "Merchant", "Transaction", "Beneficiary receives", "Status", "Rule", ""], rows, "payouts")}</section>`,
    flash,
  );
}

export function subscriptionsPage(list: Subscription[], flash?: Flash): string {
  const back = `${BASE}/ui/subscriptions`;
  const rows = list.map((s) => [
    `<code>${e(s.recurring_id)}</code>`,
    `<code>${e(s.merchant_id)}</code>`,
    `<a href="${BASE}/ui/transactions/${encodeURIComponent(s.transaction_id)}">${e(s.order_no)}</a>`,
    `${e(s.contract_amount)} ${e(s.currency)} every ${e(s.interval_count)} ${e(s.interval)}`,
    `${e(codes.recurring_status[s.state])} ${e(s.state)}`,
    e(s.deductions),
    e(s.next_deduction_at.replace("T", " ").slice(0, 19)),
    s.state === "active"
      ? postButton(
          `${formPath("chargeSubscription", { recurring_id: s.recurring_id })}`,
          "Charge now",
          {},
          { back, kind: "", test: `charge-${s.recurring_id}` },
        )
      : "",
  ]);
  return frame(
    "Subscriptions",
    "subscriptions",
    `<h1>Subscriptions</h1><section class="card">${table(["Recurring id", "Merchant", "First order", "Terms", "Status", "Charges", "Next", ""], rows, "subscriptions")}</section>`,
    flash,
  );
}

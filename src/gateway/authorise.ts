// POST /v1/authorise: a direct payment (card or token) answered in XML, or an APM payment
// (payment_method without card/token_id) answered with the payer's issuer_url.
import { resultInfo } from "../codes.js";
import { spacedDate } from "../domain/dates.js";
import { paymentOutcome, type PaymentOutcome } from "../domain/outcomes.js";
import { createSubscription, createTransaction, deductionPeriod, orderStatus } from "../domain/payment.js";
import type { Deps } from "../deps.js";
import type { Body } from "../http/body.js";
import { text, validate } from "../http/fields.js";
import type { Operation, OperationRequest, Reply } from "../http/operation.js";
import type { XmlNode } from "../render/xml.js";
import { selectOutcome, type Decision } from "../scenarios/select.js";
import type { Subscription, Transaction } from "../store/types.js";
import { cardProblems, cardSource, issueToken, type CardSource } from "./card-source.js";
import { apmRequest, paymentRequest, type PaymentRequest } from "./payment-schema.js";
import { pageUrl } from "./page-links.js";

export const authorise: Operation = {
  name: "authorise",
  path: "/v1/authorise",
  format: "xml",
  handle: (request, deps) => (isApm(request.body) ? payByApm(request, deps) : payDirect(request, deps)),
};

/** The seed leaves it open; PRODUCT.md: APM when payment_method is sent without card or token_id. */
const isApm = (body: Body) => text(body.payment_method) !== "" && text(body.card) === "" && text(body.token_id) === "";

/** Top-level string fields, the view scenario rules and the domain read. */
function flat(body: Body): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) if (typeof v === "string" || typeof v === "number") out[k] = String(v);
  return out;
}

function payDirect({ body, caller, baseUrl, now }: OperationRequest, deps: Deps): Reply {
  const request = validate(paymentRequest, body, cardProblems(body));
  const { merchant, account } = caller;
  const state = deps.store.data;
  const card = cardSource(request, merchant.merchant_id, state, now);

  const decision = decide(request, card, body, deps);
  const outcome = withExternalThreeDs(paymentOutcome(decision.outcome), request);
  const pageId = outcome.threeds === "challenge" ? deps.store.ids.hex("page", 24) : "";
  const newToken = outcome.state === "declined" ? undefined : issueToken(request, card, merchant.merchant_id, deps.store.ids, now);
  const tokenId = card.token?.token_id ?? newToken?.token_id ?? "";
  const fields = { ...flat(body), card: "" };
  const tx = createTransaction({ kind: "direct", merchantId: merchant.merchant_id, account, fields, outcome, cardMasked: card.masked, tokenId, pageId, now }, deps.store.ids);
  // a subscription starts with a successful first payment (pending and held payments start it when they succeed)
  const subscription = request.subscription && outcome.state === "approved" ? createSubscription(tx, request.subscription, now, deps.store.ids) : undefined;

  if (newToken) state.tokens.push(newToken);
  if (subscription) {
    tx.recurring_id = subscription.recurring_id;
    state.subscriptions.push(subscription);
  }
  state.transactions.push(tx);

  const info = resultInfo(outcome.result);
  const xml = directResult(tx, info, orderStatus(outcome), request, subscription);
  if (pageId) xml.push(["issuer_url", pageUrl(baseUrl, "3ds", pageId)]);
  return { xml, changed: true, result: info, rule: decision.rule };
}

function decide(request: PaymentRequest, card: CardSource, body: Body, deps: Deps): Decision {
  if (card.expired) return { outcome: "expired_card", then: {}, rule: "builtin/card-expired" };
  return selectOutcome(deps.scenario(), "authorise", { ...flat(body), card: card.number, token_id: request.token_id ?? "" }, "approved");
}

/** 3-D Secure done elsewhere (additional_information[].mpi_info) is reported as such. */
function withExternalThreeDs(outcome: PaymentOutcome, request: PaymentRequest): PaymentOutcome {
  const mpi = request.additional_information?.find((a) => a.mpi_info?.cavv || a.mpi_info?.eci)?.mpi_info;
  return mpi && outcome.state === "approved" ? { ...outcome, threeds: "external" } : outcome;
}

/** `<respon>` children in the seed's order. */
function directResult(tx: Transaction, info: string, status: string, request: PaymentRequest, sub: Subscription | undefined): XmlNode[] {
  const xml: XmlNode[] = [
    ["merchant_id", tx.merchant_id],
    ["account_id", tx.account_id],
    ["order_no", tx.order_no],
    ["amount", tx.amount],
    ["currency", tx.currency],
    ["transaction_id", tx.transaction_id],
    ["card", tx.card_masked],
    ["order_status", status],
    ["result_info", info],
  ];
  if (request.subscription) {
    xml.push(
      ["contract_name", sub?.contract_name ?? request.subscription.contract_name ?? ""],
      ["recurring_id", sub?.recurring_id ?? ""],
      ["recurring_deduction_period", sub ? deductionPeriod(sub) : ""],
      ["recurring_deduction_time", sub ? spacedDate(sub.next_deduction_at) : ""],
    );
  }
  xml.push(
    ["note", tx.note],
    ["token_id", tx.token_id],
    ["connector", tx.connector],
    ["threeds_result", tx.threeds_result],
    ["risk_action", tx.risk_action],
    ["risk_score", tx.risk_score],
    ...tx.risk_reasons.map((r): XmlNode => ["risk_reasons", [["name", r.name], ["status", r.status]]]),
  );
  return xml;
}

function payByApm({ body, caller, baseUrl, now }: OperationRequest, deps: Deps): Reply {
  validate(apmRequest, body);
  const outcome = paymentOutcome("apm_pending");
  const pageId = deps.store.ids.hex("page", 24);
  const tx = createTransaction(
    { kind: "apm", merchantId: caller.merchant.merchant_id, account: caller.account, fields: flat(body), outcome, cardMasked: "", tokenId: "", pageId, now },
    deps.store.ids,
  );
  deps.store.data.transactions.push(tx);
  const xml: XmlNode[] = [
    ["merchant_id", tx.merchant_id],
    ["account_id", tx.account_id],
    ["order_no", tx.order_no],
    ["amount", tx.amount],
    ["currency", tx.currency],
    ["issuer_url", pageUrl(baseUrl, "apm", pageId)],
  ];
  return { xml, changed: true, result: resultInfo(outcome.result), rule: "builtin/apm-pending" };
}

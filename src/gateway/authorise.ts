// POST /v1/authorise: a direct payment (card or token) answered in XML, or an APM payment
// (payment_method without card/token_id) answered with the payer's issuer_url. Where a card
// payment's card comes from: gateway/card-source.ts.
import { resultInfo } from "../domain/codes.js";
import { paymentOutcome, type PaymentOutcome } from "../domain/outcomes.js";
import { spacedDate } from "../domain/dates.js";
import { createSubscription, createTransaction, deductionPeriod, orderStatus } from "../domain/payment.js";
import type { Deps } from "../deps/deps.js";
import { scalarFields, validate } from "../http/fields.js";
import { type Body } from "../http/body.js";
import { text } from "../domain/field-text.js";
import { z } from "zod";
import { notifyPayment } from "./notifying.js";
import type { Operation, OperationRequest, Reply } from "../http/operation.js";
import type { XmlNode } from "../base/markup.js";
import type { Decision } from "../scenarios/registry.js";
import type { Subscription, Transaction } from "../domain/types.js";
import { CardOnFile } from "../domain/card-on-file.js";
import { apmRequest, paymentRequest, type PaymentRequest } from "./payment-schema.js";
import { pageUrl, paymentOnPage } from "./page-links.js";
import { gatewayOperation } from "../domain/gateway-operations.js";
import { cardProblems, cardSource, issueToken, ownToken, storeCard } from "./card-source.js";

export const authorise: Operation = {
  ...gatewayOperation("authorise"),
  // a direct payment (card or token_id) or, with payment_method, an APM payment
  request: z.union([paymentRequest.describe("direct payment"), apmRequest.describe("APM payment (payment_method set)")]),
  scenarioView: (body, caller, deps) =>
    isApm(body)
      ? { operation: "apm", fields: body, fallback: "apm_pending" }
      : { operation: "authorise", fields: { ...body, card: cardNumberFor(body, caller.merchant.merchant_id, deps) }, fallback: "approved" },
  checkFields: (body) => (isApm(body) ? readApm(body) : readDirect(body)),
  handle: (request, deps) => (isApm(request.body) ? payByApm(request, deps) : payDirect(request, deps)),
};

/** The card rules match: the `card` field, or the card on file behind the merchant's token_id. */
function cardNumberFor(body: Body, merchantId: string, deps: Deps): string | CardOnFile {
  const tokenId = text(body.token_id);
  if (tokenId) {
    const token = ownToken(deps.store.records, tokenId, merchantId);
    return token ? CardOnFile.of(token) : "";
  }
  return text(body.card).replace(/[\s-]/g, "");
}

/** The interface document leaves it open; docs/operations.md: APM when payment_method is sent without card or token_id. */
const isApm = (body: Body) => text(body.payment_method) !== "" && text(body.card) === "" && text(body.token_id) === "";

const readDirect = (body: Body) => validate(paymentRequest, body, cardProblems(body));
const readApm = (body: Body) => validate(apmRequest, body);

function payDirect({ requestId, body, caller, baseUrl, now, decision: scenarioDecision, via }: OperationRequest, deps: Deps): Reply {
  const request = readDirect(body);
  const { merchant, account } = caller;
  const { records } = deps.store;
  const card = cardSource(request, merchant.merchant_id, records, now);

  // an expired card declines whatever a scenario says; only the request's own X-Sandbox-Outcome is stronger
  const expired = card.expired && scenarioDecision.chosenBy !== "outcome";
  const decision: Pick<Decision, "outcome" | "then" | "rule"> = expired
    ? { outcome: "expired_card", then: {}, rule: "builtin/card-expired" }
    : scenarioDecision;
  const outcome = withExternalThreeDs(paymentOutcome(decision.outcome), request);
  const pageId = outcome.threeds === "challenge" ? deps.store.ids.hex("page", 24) : "";
  const newToken = outcome.state === "declined" ? undefined : issueToken(request, card, merchant.merchant_id, deps, now);
  const tokenId = card.token?.token_id ?? newToken?.token_id ?? "";
  const fields = scalarFields(body);
  fields.card = "";
  const tx = createTransaction(
    {
      kind: "direct",
      merchantId: merchant.merchant_id,
      account,
      fields,
      outcome,
      cardMasked: card.masked,
      tokenId,
      pageId,
      now,
      rule: decision.rule,
      requestId,
      source: via,
    },
    deps.store.ids,
  );
  // a subscription starts with a successful first payment (pending and held payments start it when they succeed)
  const subscription = request.subscription && outcome.state === "approved" ? createSubscription(tx, request.subscription, now, deps.store.ids) : undefined;

  if (newToken) records.addToken(newToken);
  // a subscription's deductions charge the token paid with; paid by card number without token_flag,
  // the card is kept on file for the deductions only
  const cardOnFile = () => {
    if (tokenId) return tokenId;
    const onFile = storeCard(request, card, merchant.merchant_id, deps, now);
    records.addToken(onFile);
    return onFile.token_id;
  };
  if (subscription) {
    tx.recurring_id = subscription.recurring_id;
    subscription.token_id ||= cardOnFile();
    records.addSubscription(subscription);
  }
  // a challenged or held payment starts its subscription when it succeeds: the terms and a card on file wait on it
  if ((outcome.state === "pending" || outcome.state === "review") && request.subscription) {
    tx.payer_request = { fields: {}, items: "", subscription: request.subscription, card_token: cardOnFile() };
  }
  records.addTransaction(tx);
  notifyPayment(deps, tx, undefined, decision.then.notify);

  const info = resultInfo(outcome.result);
  const xml = directResult(tx, info, orderStatus(outcome), request, subscription);
  if (pageId) xml.push(["issuer_url", pageUrl(baseUrl, "3ds", pageId)]);
  return { xml: withFields(xml, decision.then.fields), changed: true, result: info, rule: decision.rule };
}

/** A rule's `then.fields` set response children directly: existing ones change, new ones are added. */
function withFields(xml: XmlNode[], fields: Record<string, string | number | boolean> | undefined): XmlNode[] {
  if (!fields) return xml;
  const out = xml.map(([name, value]): XmlNode => (name in fields ? [name, String(fields[name])] : [name, value]));
  for (const [name, value] of Object.entries(fields)) if (!xml.some(([n]) => n === name)) out.push([name, String(value)]);
  return out;
}

/** 3-D Secure done elsewhere (additional_information[].mpi_info) is reported as such. */
function withExternalThreeDs(outcome: PaymentOutcome, request: PaymentRequest): PaymentOutcome {
  const mpi = request.additional_information?.find((a) => a.mpi_info?.cavv || a.mpi_info?.eci)?.mpi_info;
  return mpi && outcome.state === "approved" ? { ...outcome, threeds: "external" } : outcome;
}

/** The children both results start with: the payment as the merchant sent it. */
const echoed = (tx: Transaction): XmlNode[] => [
  ["merchant_id", tx.merchant_id],
  ["account_id", tx.account_id],
  ["order_no", tx.order_no],
  ["amount", tx.amount],
  ["currency", tx.currency],
];

/** `<respon>` children in the interface document's order. */
function directResult(tx: Transaction, info: string, status: string, request: PaymentRequest, sub: Subscription | undefined): XmlNode[] {
  const xml: XmlNode[] = [...echoed(tx), ["transaction_id", tx.transaction_id], ["card", tx.card_masked], ["order_status", status], ["result_info", info]];
  // the subscription's children are always there (empty without one): a client that reads the
  // answer into a map finds the same keys on every answer
  xml.push(
    ["contract_name", sub?.contract_name ?? request.subscription?.contract_name ?? ""],
    ["recurring_id", sub?.recurring_id ?? ""],
    ["recurring_deduction_period", sub ? deductionPeriod(sub) : ""],
    ["recurring_deduction_time", sub ? spacedDate(sub.next_deduction_at) : ""],
    ["note", tx.note],
    ["token_id", tx.token_id],
    ["connector", tx.connector],
    ["threeds_result", tx.threeds_result],
    ["risk_action", tx.risk_action],
    ["risk_score", tx.risk_score],
    ...tx.risk_reasons.map((r): XmlNode => [
      "risk_reasons",
      [
        ["name", r.name],
        ["status", r.status],
      ],
    ]),
  );
  return xml;
}

function payByApm(request: OperationRequest, deps: Deps): Reply {
  const { body, baseUrl, decision } = request;
  readApm(body);
  // pending until the payer acts, unless a rule decides now (the default's e-mail markers, say)
  const outcome = paymentOutcome(decision.outcome);
  const { tx, pageId, rule } = paymentOnPage("apm", request, scalarFields(body), outcome, "builtin/apm-pending", deps);
  deps.store.records.addTransaction(tx);
  notifyPayment(deps, tx, undefined, decision.then.notify);
  const xml: XmlNode[] = [...echoed(tx), ["issuer_url", pageUrl(baseUrl, "apm", pageId)]];
  // pending by default: named builtin/apm-pending, unless a rule decided
  return { xml, changed: true, result: resultInfo(outcome.result), rule };
}

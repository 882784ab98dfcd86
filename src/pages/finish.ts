// Finishing a payment that waits for its payer. Every payer page, headless POST and operator
// completion takes this one path: the outcome moves the payment through the transitions table →
// the card paid with is kept → a subscription starts on success → the merchant is notified →
// the state is saved → the request log hears of it. And the signed result the payer carries
// back to return_url.
import { resultInfo } from "../domain/codes.js";
import { paymentOutcome } from "../domain/outcomes.js";
import type { Deps } from "../deps/deps.js";
import { completePayment } from "../domain/completion.js";
import { orderStatusOf, settleWaitingRequest } from "../domain/payment.js";
import { recordHistory } from "../domain/history.js";
import { Refusal } from "../domain/lifecycle.js";
import { issueToken, storeCard, type CardSource } from "../gateway/card-source.js";
import type { PaymentRequest } from "../gateway/payment-schema.js";
import type { NotifyBehaviour } from "../notify/notifier.js";
import { notifyPayment } from "../gateway/notifying.js";
import { signResponse } from "../domain/signature.js";
import { accountOf, secretKeyOf } from "../domain/merchants.js";
import { normaliseIp } from "../store/request-log.js";
import type { Transaction } from "../domain/types.js";

/** The card the payer paid with at the hosted checkout. */
export interface PaidCard {
  number: string;
  masked: string;
  expiration_month: string;
  expiration_year: string;
  holder: string;
}

export interface PayerAction {
  /** the authorise outcome (data/outcomes.json) the payment moves by */
  outcome: string;
  /** what the payer or operator chose, e.g. "paid", "threeds_passed", "card" */
  chosen: string;
  /** what decided: the scenario rule (card form), "payer/<chosen>", "operator/<chosen>" */
  rule: string;
  source: "payer" | "operator";
  card?: PaidCard;
  notify?: NotifyBehaviour;
  /** for the request log: the page or operator path, and the caller's address */
  path: string;
  ip: string;
}

/** Finishes (or moves on) a pending payment; a Refusal when it is not pending any more. */
export async function finishPayment(deps: Deps, tx: Transaction, action: PayerAction): Promise<Refusal | undefined> {
  const now = deps.store.records.nowOf(tx.merchant_id, deps.clock.now());
  const account = accountOf(deps.store.records, tx.merchant_id, tx.account_id);
  const before = tx.state;
  const refusal = account
    ? completePayment(tx, paymentOutcome(action.outcome), account, now, deps.store.ids)
    : new Refusal("unknown_account", `account ${tx.account_id} of merchant ${tx.merchant_id} is gone (reset?)`);
  const requestId = deps.requests.nextId();
  if (!refusal) {
    if (action.card) keepCard(deps, tx, action.card, now);
    deps.scenarios.coverage.produced(tx.merchant_id, "authorise", action.outcome);
    settleWaitingRequest(deps.store.records, tx, now, deps.store.ids);
    recordHistory(tx, now, {
      event: `${action.source}: ${action.chosen}`,
      result: resultInfo(tx.result),
      rule: action.rule,
      source: action.source,
      request_id: requestId,
    });
    if (tx.state !== before) notifyPayment(deps, tx, undefined, action.notify);
    deps.store.records.changed("transactions", tx);
    await deps.store.commit();
  }
  deps.requests.add({
    id: requestId,
    at: now.toISOString(),
    operation: action.source === "payer" ? "payer page" : "operator complete",
    path: action.path,
    ip: normaliseIp(action.ip),
    merchant_id: tx.merchant_id,
    account_id: tx.account_id,
    order_no: tx.order_no,
    http_status: refusal ? 409 : 200,
    result: refusal ? refusal.info : resultInfo(tx.result),
    rule: action.rule,
    signature: null,
  });
  return refusal;
}

/** The card on the payment; a token when the request asked for one (token_flag) or a subscription needs the card on file. */
function keepCard(deps: Deps, tx: Transaction, card: PaidCard, now: Date): void {
  tx.card_masked = card.masked;
  tx.payment_method = "card";
  if (tx.state === "declined" || tx.state === "cancelled") return;
  const request = {
    ...tx.payer_request?.fields,
    expiration_month: card.expiration_month,
    expiration_year: card.expiration_year,
    first_name: card.holder,
    last_name: "",
  } as PaymentRequest;
  const source: CardSource = { number: card.number, masked: card.masked, expired: false, token: undefined };
  const asked = issueToken(request, source, tx.merchant_id, deps, now);
  const needsFile = tx.payer_request?.subscription !== undefined && !tx.payer_request.card_token;
  const token = asked ?? (needsFile ? storeCard(request, source, tx.merchant_id, deps, now) : undefined);
  if (!token) return;
  deps.store.records.addToken(token);
  if (asked) tx.token_id = token.token_id;
  if (tx.payer_request?.subscription) tx.payer_request.card_token ??= token.token_id;
}

/** What the payer carries back: the result as query parameters, signed like a direct payment's response. */
function payerResult(deps: Deps, tx: Transaction): Record<string, string> {
  const params: Record<string, string> = {
    merchant_id: tx.merchant_id,
    account_id: tx.account_id,
    order_no: tx.order_no,
    transaction_id: tx.transaction_id,
    amount: tx.amount,
    currency: tx.currency,
    order_status: orderStatusOf(tx.state),
    result_info: resultInfo(tx.result),
    card: tx.card_masked,
  };
  params.encryption_data = signResponse("payer_return", params, secretKeyOf(deps.store.records, tx.merchant_id));
  return params;
}

/** Where the payment stands, as a script finishing it headless is told (page JSON, operator call). */
export const resultView = (deps: Deps, tx: Transaction) => ({
  transaction_id: tx.transaction_id,
  order_status: orderStatusOf(tx.state),
  result_info: resultInfo(tx.result),
  return_url: returnUrlFor(deps, tx),
});

/** return_url with the signed result added to its query; "" when the payment has no http(s) return_url. */
export function returnUrlFor(deps: Deps, tx: Transaction): string {
  if (!/^https?:\/\//i.test(tx.return_url) || !URL.canParse(tx.return_url)) return "";
  const url = new URL(tx.return_url);
  for (const [name, value] of Object.entries(payerResult(deps, tx))) url.searchParams.set(name, value);
  return url.toString();
}

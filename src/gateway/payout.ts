// POST /v1/payout: validate → same request_id? (replay or refuse) → quote fees and FX → the
// scenario picks the status → store → notify → answer with the payout (JSON numbers for amounts).
import { GatewayError } from "../domain/codes.js";
import { catalogue } from "../domain/outcomes.js";
import {
  clearingSystem,
  createPayout,
  differingFields,
  planPayout,
  quotePayout,
  type FeePaidBy,
  type PayoutPricing,
  type PayoutRule,
} from "../domain/payout-rules.js";
import { fail, validate } from "../http/fields.js";
import { type Body } from "../http/body.js";
import type { PayoutFields } from "../domain/payout-fields.js";
import { notifyPayout, payoutResponse } from "../notify/payout-notice.js";
import type { Operation, Reply } from "../http/operation.js";
import type { Decision } from "../scenarios/registry.js";
import type { Payout } from "../domain/types.js";
import { payoutFields, payoutProblems, payoutRequest, withNestedObjects } from "./payout-schema.js";
import { gatewayOperation } from "../domain/gateway-operations.js";

const readPayout = (body: Body, pricing: PayoutPricing) => validate(payoutRequest, body, payoutProblems(body, pricing));

export const payout: Operation = {
  ...gatewayOperation("payout"),
  request: payoutRequest,
  // rules match nested paths (beneficiary.bank_details.account_number) also when a form sent JSON strings
  scenarioView: (body) => ({ operation: "payout", fields: withNestedObjects(body), fallback: "COMPLETED" }),

  checkFields: (body, deps) => readPayout(body, deps.payoutPricing),
  handle({ body, caller, now, decision }, deps) {
    const pricing = deps.payoutPricing;
    const request = payoutFields(readPayout(body, pricing));
    const merchantId = caller.merchant.merchant_id;
    const earlier = deps.store.records.payoutByRequest(merchantId, request.request_id);
    if (earlier) return replay(earlier, request);

    const paymentCurrency = request.payment_currency.toUpperCase();
    const quote = quotePayout(
      {
        method: request.payment_method,
        feePaidBy: (request.fee_paid_by || "PAYER") as FeePaidBy,
        paymentCurrency,
        sourceCurrency: (request.source_currency || paymentCurrency).toUpperCase(),
        paymentAmount: request.payment_amount,
        sourceAmount: request.source_amount,
      },
      pricing,
    );
    if ("field" in quote) fail([quote]);

    const bank = request.beneficiary.bank_details;
    const created = createPayout(
      {
        merchantId,
        accountId: caller.account.account_id,
        request,
        quote,
        // a named outcome (data/outcomes.json payout_outcomes), refined by the rule's own then.payout
        plan: planPayout(payoutRule(decision), now),
        clearing: clearingSystem(pricing, bank.bank_country_code, bank.account_currency || paymentCurrency),
        rule: decision.rule,
        now,
      },
      deps.store.ids,
    );
    if (decision.then.notify) created.notify = decision.then.notify;
    deps.store.records.addPayout(created);
    notifyPayout(created, deps.notifier, deps.store, created.notify);
    // a rule's `then.fields` set response fields directly (this answer only; the payout keeps its values)
    const json = { ...payoutResponse(created), ...decision.then.fields };
    return { json, changed: true, result: outcomeText(created), rule: decision.rule, ...(quote.note ? { note: quote.note } : {}) };
  },
};

const outcomeText = (p: Payout) => `${p.status}${p.failure_type ? `:${p.failure_type}` : ""} ${p.transaction_id}`;

/** The same request_id again: the same body gets the payout as it is now; a different body is refused. */
function replay(earlier: Payout, request: PayoutFields): Reply {
  const differs = differingFields(earlier.request, request);
  if (differs.length > 0) {
    const detail = `request_id ${earlier.request_id} created payout ${earlier.transaction_id}; this request differs in ${differs.join(", ")}`;
    const message = `differs from the request that created payout ${earlier.transaction_id}`;
    throw new GatewayError(
      "idempotency_conflict",
      detail,
      differs.map((field) => ({ field, message })),
    );
  }
  return { json: payoutResponse(earlier), changed: false, result: `replay: ${outcomeText(earlier)}`, rule: "builtin/idempotent-replay" };
}

function payoutRule(decision: Decision): PayoutRule | undefined {
  const named = catalogue.payout_outcomes[decision.outcome];
  return named || decision.then.payout ? { ...named, ...decision.then.payout } : undefined;
}

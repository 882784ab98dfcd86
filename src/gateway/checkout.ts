// POST /v1/checkout: the redirect (iFrame) payment. The payment request without card data
// becomes a pending transaction, and the answer is the interface document's loading page that submits itself
// (theForm) to Sandgate's hosted checkout, where the payer pays.
import { resultInfo } from "../domain/codes.js";
import { paymentOutcome } from "../domain/outcomes.js";
import { scalarFields, validate } from "../http/fields.js";
import { type Body } from "../http/body.js";
import type { Operation } from "../http/operation.js";
import { notifyPayment } from "./notifying.js";
import { checkoutPage } from "../render/checkout-page.js";
import { checkoutInputs, requestFields } from "./checkout-inputs.js";
import { pageUrl, paymentOnPage } from "./page-links.js";
import { paymentRequest, type PaymentRequest } from "./payment-schema.js";
import type { PayerRequest } from "../domain/types.js";
import { gatewayOperation } from "../domain/gateway-operations.js";

/** Card data belongs to the direct payment; here the payer enters it at the hosted checkout. */
const DIRECT_ONLY = ["card", "secure_payment", "accept", "expiration_month", "expiration_year", "security_code"];

/** The payment request's checks, plus a refusal of every card field sent; one error lists all. */
function validateCheckout(body: Body): PaymentRequest {
  const refused = DIRECT_ONLY.filter((field) => body[field] !== undefined).map((field) => ({
    field,
    message: "is for direct payments (/v1/authorise) only: the payer enters card data at the hosted checkout",
  }));
  return validate(paymentRequest, body, refused);
}

/** What the hosted checkout needs later: the fields rules match when the payer pays, the items, the subscription. */
function payerRequest(body: Body, request: PaymentRequest): PayerRequest {
  const { encryption_data: _signature, ...fields } = scalarFields(body);
  return { fields, items: request.items ?? "", ...(request.subscription ? { subscription: request.subscription } : {}) };
}

export const checkout: Operation = {
  ...gatewayOperation("checkout"),
  request: paymentRequest,
  checkFields: validateCheckout,
  handle(operationRequest, deps) {
    const { body, caller, baseUrl, decision } = operationRequest;
    const request = validateCheckout(body);
    const fields = requestFields(body);
    const outcome = paymentOutcome("checkout_pending");
    // the outcome is fixed (the payer decides at the hosted checkout); a matching rule may still shape latency or notifications
    const { tx, pageId, rule } = paymentOnPage("checkout", operationRequest, Object.fromEntries(fields), outcome, "builtin/checkout-pending", deps);
    tx.payer_request = payerRequest(body, request);
    if (decision.chosenBy === "header") tx.payer_request.scenario = decision.scenario;
    // X-Sandbox-Outcome: the payer still goes through the hosted checkout; the card they enter ends with it
    if (decision.chosenBy === "outcome") tx.payer_request.outcome = decision.outcome;
    deps.store.records.addTransaction(tx);
    notifyPayment(deps, tx, undefined, decision.then.notify);
    const html = checkoutPage(pageUrl(baseUrl, "checkout", pageId), checkoutInputs(fields, caller.account));
    return { html, changed: true, result: resultInfo(outcome.result), rule };
  },
};

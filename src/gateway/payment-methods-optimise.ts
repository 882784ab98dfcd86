// POST /v1/paymentMethods/optimise (docs/operations.md; the interface document's operation 12 shows no path or
// payload): merchant_id, account_id, currency, amount, billing_country, encryption_data → the
// account's payment methods ranked for that payment, each with a score and a reason. The ranking
// rules are in domain/payment-methods.ts; the method profiles in fixtures/payment-methods.json.
import { codes } from "../domain/codes.js";
import { rankPaymentMethods } from "../domain/payment-methods.js";
import { formatAmount } from "../domain/money.js";
import { obj, requiredCountry, requiredCurrency, requiredPositiveAmount, validate, withEnvelope } from "../http/fields.js";
import { type Body } from "../http/body.js";
import type { Operation } from "../http/operation.js";
import { loadPaymentMethods } from "../store/fixtures/payment-method-profiles.js";
import { gatewayOperation } from "../domain/gateway-operations.js";

const optimiseRequest = obj({
  currency: requiredCurrency(),
  amount: requiredPositiveAmount(),
  billing_country: requiredCountry(),
});

const readOptimise = (body: Body) => validate(optimiseRequest, body);

export const paymentMethodsOptimise: Operation = {
  ...gatewayOperation("paymentMethodsOptimise"),
  request: withEnvelope(optimiseRequest.shape),
  checkFields: readOptimise,
  handle({ body, caller }, deps) {
    const request = readOptimise(body);
    const query = { currency: request.currency.toUpperCase(), amount: formatAmount(request.amount), country: request.billing_country.toUpperCase() };
    const payment_methods = rankPaymentMethods(caller.account.payment_methods, loadPaymentMethods(deps.config.fixtures), query);
    const json = {
      merchant_id: caller.merchant.merchant_id,
      account_id: caller.account.account_id,
      encryption_data: "",
      return_status: codes.return_status.ok,
      return_message: codes.return_status.ok_message,
      currency: query.currency,
      amount: query.amount,
      billing_country: query.country,
      payment_methods,
    };
    const best = payment_methods.find((m) => m.suitable)?.payment_method ?? "none suitable";
    return { json, changed: false, result: `${codes.return_status.ok_message}: ${payment_methods.length} methods ranked, best ${best}` };
  },
};

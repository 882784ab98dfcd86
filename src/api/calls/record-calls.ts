// Operator calls: The records a merchant's requests made (transactions, refunds, payouts, subscriptions, merchants) and the operator's moves on them: settle, complete, fail, charge, provision, rotate; the merchant portal's actions.
// Entries of the one table (src/api/operator-calls.ts); see OperatorCall for what each field means.
import { z } from "zod";
import { MALFORMED, type OperatorCall } from "../operator-call.js";
import { charged, completed, merchantView, payoutView, refund, subscription, transaction } from "../operator-answers.js";
import { completeBody, failPayoutBody, settleBody } from "../operator-bodies.js";
import { portalCalls } from "./portal-calls.js";

const s = z.string();

export const RECORD_CALLS = [
  {
    method: "get",
    path: "/__sandbox/transactions",
    operationId: "listTransactions",
    scope: "all",
    summary: "transactions with their history",
    query: { merchant_id: "only this merchant's", order_no: "only this order's" },
    answer: z.strictObject({ transactions: z.array(transaction) }),
  },
  {
    method: "get",
    path: "/__sandbox/refunds",
    operationId: "listRefunds",
    scope: "all",
    summary: "refunds",
    query: { merchant_id: "only this merchant's", transaction_id: "only this payment's" },
    answer: z.strictObject({ refunds: z.array(refund) }),
  },
  {
    method: "post",
    path: "/__sandbox/refunds/{ref}/settle",
    operationId: "settleRefund",
    form: "/__sandbox/ui/refunds/{ref}/settle",
    scope: { record: "refund", param: "ref" },
    body: settleBody,
    summary: 'settles an accepted refund now: {"result":"processed"|"failed"}',
    answer: z.strictObject({ refund }),

    problems: {
      400: `invalid_result: result is not processed or failed; ${MALFORMED}`,
      404: "refund_not_found",
      409: "refund_settled: the refund is no longer accepted",
    },
  },
  {
    method: "post",
    path: "/__sandbox/payments/{transaction_id}/complete",
    operationId: "completePayment",
    form: "/__sandbox/ui/payments/{transaction_id}/complete",
    scope: { record: "transaction", param: "transaction_id" },
    body: completeBody,
    summary: 'finishes a payment waiting for its payer, as the payer would: {"outcome":"paid"|...}',
    answer: completed,

    problems: {
      400: `invalid_outcome: not an outcome of the page the payment waits at; ${MALFORMED}`,
      404: "transaction_not_found",
      409: {
        description: "payment_not_pending: the payment is no longer pending (the answer says where it stands)",
        schema: z.looseObject({ error: s, message: s, ...completed.shape }),
      },
    },
  },
  ...portalCalls(),
  {
    method: "get",
    path: "/__sandbox/payouts",
    operationId: "listPayouts",
    scope: "all",
    summary: "payouts as merchants see them, and what the sandbox does next",
    query: { merchant_id: "only this merchant's", status: "PENDING, COMPLETED or FAILED", request_id: "only this request's" },
    answer: z.strictObject({ payouts: z.array(payoutView) }),
  },
  {
    method: "post",
    path: "/__sandbox/payouts/{transaction_id}/complete",
    operationId: "completePayout",
    form: "/__sandbox/ui/payouts/{transaction_id}/complete",
    scope: { record: "payout", param: "transaction_id" },
    summary: "completes a pending payout",
    answer: z.strictObject({ payout: payoutView }),
    problems: { 404: "payout_not_found", 409: "payout_final: only PENDING payouts move" },
  },
  {
    method: "post",
    path: "/__sandbox/payouts/{transaction_id}/fail",
    operationId: "failPayout",
    form: "/__sandbox/ui/payouts/{transaction_id}/fail",
    scope: { record: "payout", param: "transaction_id" },
    body: failPayoutBody,
    summary: "fails a pending payout: {failure_type, failure_reason}",
    answer: z.strictObject({ payout: payoutView }),

    problems: { 400: `invalid_failure_type, invalid_failure_reason; ${MALFORMED}`, 404: "payout_not_found", 409: "payout_final: only PENDING payouts move" },
  },
  {
    method: "get",
    path: "/__sandbox/subscriptions",
    operationId: "listSubscriptions",
    scope: "all",
    summary: "subscriptions with the payments they charged",
    query: { merchant_id: "only this merchant's", recurring_id: "only this subscription" },
    answer: z.strictObject({ subscriptions: z.array(subscription.extend({ transactions: z.array(charged) })) }),
  },
  {
    method: "get",
    path: "/__sandbox/merchants/{merchant_id}",
    operationId: "getMerchant",
    scope: { merchant: "merchant_id" },
    summary: "a merchant Sandgate knows, with its secret key",
    answer: z.strictObject({ merchant: merchantView }),
    problems: { 404: "merchant_not_found" },
  },
  {
    method: "put",
    path: "/__sandbox/merchants/{merchant_id}",
    operationId: "provisionMerchant",
    scope: { merchant: "merchant_id" },
    summary: "the merchant with its secret key, provisioned now if Sandgate does not know it (with --merchant-keys random its key is random)",
    answer: z.strictObject({ merchant: merchantView, created: z.boolean().describe("provisioned by this call") }),
    problems: { 400: "invalid_merchant_id", 404: "merchant_not_found: --strict-merchants is on" },
  },
  {
    method: "post",
    path: "/__sandbox/merchants/{merchant_id}/rotate-key",
    operationId: "rotateMerchantKey",
    scope: { merchant: "merchant_id" },
    summary: "gives a merchant a new random secret key (--merchant-keys random): the old one is refused from the next request on",
    answer: z.strictObject({ merchant: merchantView }),
    problems: { 404: "merchant_not_found", 409: "keys_not_random: with --merchant-keys id a provisioned merchant's key is sk_test_<id>" },
  },
  {
    method: "post",
    path: "/__sandbox/subscriptions/{recurring_id}/charge",
    operationId: "chargeSubscription",
    form: "/__sandbox/ui/subscriptions/{recurring_id}/charge",
    scope: { record: "subscription", param: "recurring_id" },
    summary: "charges the next deduction now",
    answer: z.strictObject({ subscription }),
    problems: { 404: "subscription_not_found", 409: "subscription_not_active: nothing left to charge" },
  },
] as const satisfies readonly OperatorCall[];

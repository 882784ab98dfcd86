// What each operation answers, as zod schemas for the OpenAPI document (the request side comes from
// each operation's own `request` schema). test/openapi.test.ts validates real answers of every
// operation against the generated document, so these stay what Sandgate sends.
import { z } from "zod";

const s = z.string();
/** A field problem of a refusal: which field, and what is wrong. */
const problems = z.array(z.strictObject({ field: s, message: s })).describe("every bad field of a refused request");
const envelope = {
  merchant_id: s,
  account_id: s,
  encryption_data: s.describe("the answer's signature (see Signatures)"),
  return_status: z.enum(["0", "1"]),
  return_message: s,
};

/** The JSON answer of a refused request (400, 401, 403, 404, 413, 5xx): the envelope, the operation's empty list, and the problems. */
export const jsonRefusal = z.looseObject({ ...envelope, return_status: z.literal("0"), errors: problems.optional() });

/** <respon> of a refused payment: what was sent, order_status 0 and the reason. */
export const xmlRefusal = z.looseObject({ merchant_id: s, account_id: s, order_no: s, order_status: s, result_info: s, encryption_data: s });

const reason = z.strictObject({ name: s, status: z.enum(["ACCEPT", "REVIEW", "REJECT"]) });
/** <respon> of a direct payment: every child on every answer, in this order (the subscription ones empty without one). */
const directPaymentAnswer = z.strictObject({
  merchant_id: s,
  account_id: s,
  order_no: s,
  amount: s,
  currency: s,
  transaction_id: s,
  card: s.describe("masked: first six, last four"),
  order_status: s.describe("1 success, 0 failure, -1 3-D Secure challenge, -2 review, -3 pending"),
  result_info: s.describe("<code>:<text>"),
  contract_name: s,
  recurring_id: s,
  recurring_deduction_period: s,
  recurring_deduction_time: s.describe("YYYY-MM-DD HH:MM:SS, or empty"),
  note: s,
  token_id: s,
  connector: s,
  threeds_result: s,
  risk_action: z.enum(["ACCEPT", "REVIEW", "REJECT"]),
  risk_score: s,
  risk_reasons: z.union([reason, z.array(reason)]).describe("one element per reason"),
  issuer_url: s.optional().describe("the 3-D Secure challenge page, when order_status is -1"),
  encryption_data: s,
});
/** <respon> of an APM payment: what was sent and the payer's page. */
const apmPaymentAnswer = z.looseObject({ merchant_id: s, account_id: s, order_no: s, amount: s, currency: s, issuer_url: s, encryption_data: s });

/** A batch answer: the envelope and one result per order (its identity fields, status and message). */
const batchAnswer = (arrayField: string) => z.looseObject({ ...envelope, [arrayField]: z.array(z.record(z.string(), z.string())) });

const queryAnswer = z.looseObject({
  ...envelope,
  orders_list: z.array(
    z.looseObject({ query_result: z.enum(["0", "1"]), transaction_id: s, order_no: s }).describe("a payment as the gateway's query result shows it"),
  ),
});
const refundSearchAnswer = z.looseObject({ ...envelope, refund_orders: z.array(z.looseObject({ transaction_id: s, order_no: s }).describe("a refund")) });
const subscriptionCancelAnswer = z.looseObject({ ...envelope, recurring_id: s, recurring_status: s });
const optimiseAnswer = z.looseObject({
  ...envelope,
  payment_methods: z.array(z.looseObject({ payment_method: s, rank: z.number().int(), suitable: z.boolean(), score: z.number(), reason: s })),
});
export const payoutAnswer = z.looseObject({
  merchant_id: s,
  account_id: s,
  request_id: s,
  beneficiary: z.looseObject({ bank_details: z.looseObject({ local_clearing_system: s }) }),
  payer: z.looseObject({}),
  payment_amount: s,
  source_amount: s,
  encryption_data: s,
  amount_beneficiary_receives: z.number(),
  amount_payer_pays: z.number(),
  created_at: s,
  last_updated_at: s,
  failure_reason: s,
  failure_type: s,
  fee_amount: z.number(),
  fee_currency: s,
  payer_id: s,
  transaction_id: s,
  short_reference_id: s,
  status: z.enum(["PENDING", "COMPLETED", "FAILED"]),
});

/** What an operation answers with 200, by operation name. */
export const ANSWERS: Record<string, z.ZodType> = {
  authorise: z.union([directPaymentAnswer, apmPaymentAnswer]),
  retrievalTrans: queryAnswer,
  capture: batchAnswer("capture_orders"),
  review: batchAnswer("review_orders"),
  cancel: batchAnswer("cancel_orders"),
  refund: batchAnswer("refund_orders"),
  retrievalRefund: refundSearchAnswer,
  subscriptionCancel: subscriptionCancelAnswer,
  paymentMethodsOptimise: optimiseAnswer,
  payout: payoutAnswer,
};

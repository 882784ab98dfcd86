// Per-order request schemas of the batch operations.
import { obj, required, requiredCurrency, requiredDecimal, requiredId, str } from "../http/fields.js";

const identity = {
  transaction_id: requiredId(),
  order_no: requiredId(),
  currency: requiredCurrency(),
  amount: requiredDecimal(),
};

export const captureOrder = obj(identity);
export const cancelOrder = obj(identity);
export const reviewOrder = obj({ ...identity, review_flag: required() });
export const refundOrder = obj({ ...identity, refund_amount: requiredDecimal(), refund_reason: str() });

// Per-order request schemas of the batch operations.
import { DECIMAL, obj, required, str } from "../http/fields.js";

const decimalRequired = () => required().refine((s) => DECIMAL.test(s), "must be a decimal amount such as 10.00");

const identity = {
  transaction_id: required(),
  order_no: required(),
  currency: required().refine((s) => /^[A-Za-z]{3}$/.test(s), "must be a three-letter currency code"),
  amount: decimalRequired(),
};

export const captureOrder = obj(identity);
export const cancelOrder = obj(identity);
export const reviewOrder = obj({ ...identity, review_flag: required() });
export const refundOrder = obj({ ...identity, refund_amount: decimalRequired(), refund_reason: str() });

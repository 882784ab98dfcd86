// A refund as the gateway shows it: an element of retrievalRefund's refund_orders, and the data of
// a refund notification. Here, not in gateway/, so that notifications (notify/) and the operation
// both use it without notify/ importing the gateway's operations.
import { codes } from "../domain/codes.js";
import { compactDate } from "../domain/dates.js";
import type { Refund, Transaction } from "../domain/types.js";

/** One element of `refund_orders`, in the interface document's field order; every value a string. */
export function refundElement(r: Refund, tx: Transaction | undefined) {
  return {
    transaction_id: r.transaction_id,
    order_no: r.order_no,
    amount: r.amount,
    refund_status: codes.refund_status[r.state],
    payment_status: tx ? codes.payment_status[tx.state] : "",
    refund_amount: r.refund_amount,
    refund_reference: r.refund_reference,
    currency: r.currency,
    refund_reason: r.refund_reason,
    refund_reference_id: r.refund_reference_id,
    refund_date: compactDate(r.refund_date),
    refund_processing_date: compactDate(r.refund_processing_date),
  };
}

// POST /v1/retrievalRefund: the caller's refunds as they are now (accepted, processed, failed),
// selected by order_no, transaction_id and/or refund_reference_id, optionally within
// start_date/end_date (on refund_date); with no selector, the account's most recent refunds.
// Up to 100 selected values. A selected value without refunds simply lists nothing: the interface document's
// refund element has no "not found" field.
import type { Refund } from "../domain/types.js";
import { selectionOperation } from "./selection.js";
import { refundElement } from "../render/refund-element.js";

export const retrievalRefund = selectionOperation({
  name: "retrievalRefund",
  selectors: ["order_no", "transaction_id", "refund_reference_id"],
  limit: 100,
  listField: "refund_orders",
  noun: "refund",
  lookup: (records, scope) => ({
    recent: () => records.refundsOfAccount(scope.merchant_id, scope.account_id),
    named: (field, value): readonly Refund[] => {
      if (field === "order_no") return records.refundsByOrder(scope.merchant_id, value);
      if (field === "transaction_id") return records.refundsOf(value);
      const refund = records.refund(value);
      return refund ? [refund] : [];
    },
  }),
  dateOf: (r) => r.refund_date,
  list: (selected, records) => selected.filter((s) => "record" in s).map(({ record }) => refundElement(record, records.transaction(record.transaction_id))),
});

// POST /v1/retrievalTrans: the caller's transactions as they are now. Selected by order_no and/or
// transaction_id (one value, a comma list or the field repeated), optionally within
// start_date/end_date; with no selector, the account's most recent ones. The interface document: up to 100
// orders per request, and only from the merchant's registered IP addresses.
import type { Transaction } from "../domain/types.js";
import { foundElement, missingElement } from "../render/query-element.js";
import { selectionOperation } from "./selection.js";

export const retrievalTrans = selectionOperation({
  name: "retrievalTrans",
  selectors: ["order_no", "transaction_id"],
  limit: 100,
  listField: "orders_list",
  noun: "order",
  lookup: (records, scope) => ({
    recent: () => records.transactionsOfAccount(scope.merchant_id, scope.account_id),
    named: (field, value): readonly Transaction[] => {
      if (field === "order_no") return records.transactionsByOrder(scope.merchant_id, value);
      const tx = records.transaction(value);
      return tx ? [tx] : [];
    },
  }),
  dateOf: (tx) => tx.created_at,
  list: (selected, records) => selected.map((s) => ("record" in s ? foundElement(s.record, records) : missingElement(s.missing))),
});

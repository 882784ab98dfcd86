// POST /v1/retrievalRefund: the caller's refunds as they are now (accepted, processed, failed),
// selected by order_no, transaction_id and/or refund_reference_id, optionally within
// start_date/end_date (on refund_date); with no selector, the account's most recent refunds.
// Up to 100 selected values. A selected value without refunds simply lists nothing: the interface document's
// refund element has no "not found" field.
import { codes } from "../domain/codes.js";
import type { Body } from "../http/fields.js";
import type { Operation } from "../http/operation.js";
import type { Refund } from "../domain/types.js";
import { readSelection, selectionRequest, selectRecords, searchResult } from "./selection.js";
import { refundElement } from "../render/refund-element.js";
import { gatewayOperation } from "../domain/gateway-operations.js";

const SEARCH_LIMIT = 100;
const SELECTORS = ["order_no", "transaction_id", "refund_reference_id"] as const;

const readSelected = (body: Body) => readSelection(body, SELECTORS, SEARCH_LIMIT);

export const retrievalRefund: Operation = {
  ...gatewayOperation("retrievalRefund"),
  request: selectionRequest(SELECTORS),
  emptyResult: { refund_orders: [] },
  checkFields: readSelected,

  handle({ body, caller }, deps) {
    const selection = readSelected(body);
    const scope = { merchant_id: caller.merchant.merchant_id, account_id: caller.account.account_id };
    const { records } = deps.store;
    const lookup = {
      recent: () => records.refundsOfAccount(scope.merchant_id, scope.account_id),
      named: (field: (typeof SELECTORS)[number], value: string): readonly Refund[] => {
        if (field === "order_no") return records.refundsByOrder(scope.merchant_id, value);
        if (field === "transaction_id") return records.refundsOf(value);
        const refund = records.refund(value);
        return refund ? [refund] : [];
      },
    };
    const selected = selectRecords(lookup, selection, scope, (r) => r.refund_date);
    const refund_orders = selected.filter((s) => "record" in s).map(({ record }) => refundElement(record, records.transaction(record.transaction_id)));
    const json = {
      ...scope,
      encryption_data: "",
      return_status: codes.return_status.ok,
      return_message: codes.return_status.ok_message,
      refund_orders,
    };
    return {
      json,
      changed: false,
      result: `${codes.return_status.ok_message}: ${searchResult(refund_orders.length, "refund", selected.length - refund_orders.length)}`,
    };
  },
};

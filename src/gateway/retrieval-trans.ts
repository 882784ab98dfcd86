// POST /v1/retrievalTrans: the caller's transactions as they are now. Selected by order_no and/or
// transaction_id (one value, a comma list or the field repeated), optionally within
// start_date/end_date; with no selector, the account's most recent ones. The interface document: up to 100
// orders per request, and only from the merchant's registered IP addresses.
import { codes } from "../domain/codes.js";
import type { Body } from "../http/fields.js";
import type { Operation } from "../http/operation.js";
import { foundElement, missingElement } from "../render/query-element.js";
import { readSelection, selectionRequest, selectRecords, searchResult } from "./selection.js";
import { gatewayOperation } from "../domain/gateway-operations.js";

const QUERY_LIMIT = 100;
const SELECTORS = ["order_no", "transaction_id"] as const;

const readSelected = (body: Body) => readSelection(body, SELECTORS, QUERY_LIMIT);

export const retrievalTrans: Operation = {
  ...gatewayOperation("retrievalTrans"),
  request: selectionRequest(SELECTORS),
  emptyResult: { orders_list: [] },
  checkFields: readSelected,
  handle({ body, caller }, deps) {
    const selection = readSelected(body);
    const scope = { merchant_id: caller.merchant.merchant_id, account_id: caller.account.account_id };
    const { records } = deps.store;
    const lookup = {
      recent: () => records.transactionsOfAccount(scope.merchant_id, scope.account_id),
      named: (field: (typeof SELECTORS)[number], value: string) => {
        if (field === "order_no") return records.transactionsByOrder(scope.merchant_id, value);
        const tx = records.transaction(value);
        return tx ? [tx] : [];
      },
    };
    const selected = selectRecords(lookup, selection, scope, (tx) => tx.created_at);
    const orders_list = selected.map((s) => ("record" in s ? foundElement(s.record, records) : missingElement(s.missing)));
    const json = {
      ...scope,
      encryption_data: "",
      return_status: codes.return_status.ok,
      return_message: codes.return_status.ok_message,
      orders_list,
    };
    const found = selected.filter((s) => "record" in s).length;
    return { json, changed: false, result: `${codes.return_status.ok_message}: ${searchResult(found, "order", selected.length - found)}` };
  },
};

// POST /v1/capture: up to 50 orders; captures an authorised payment once, whole or partly.
import { capture as captureTransaction } from "../domain/lifecycle.js";
import { batchOperation } from "./batch.js";
import { captureOrder } from "./batch-orders.js";

export const capture = batchOperation({
  name: "capture",
  order: captureOrder,
  statusField: "capture_status",
  messageField: "error_message",
  echo: [],
  apply: (order, tx, { caller, now }) => captureTransaction(tx, order.amount, caller.account, now) ?? {},
  event: () => "payment.captured",
});

// POST /v1/cancel: up to 50 orders; cancels a payment before capture (authorised or held for review).
import { cancel as cancelTransaction } from "../domain/lifecycle.js";
import { batchOperation } from "./batch.js";
import { cancelOrder } from "./batch-orders.js";

export const cancel = batchOperation({
  name: "cancel",
  order: cancelOrder,
  statusField: "cancel_status",
  messageField: "error_message",
  echo: [],
  apply: (order, tx, { caller, now }) => cancelTransaction(tx, order.amount, caller.account, now) ?? {},
  event: () => "payment.cancelled",
});

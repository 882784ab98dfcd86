// POST /v1/subscription/cancel (docs/operations.md; the interface document's operation 8 shows no path or payload):
// merchant_id, account_id, recurring_id or order_no (the first payment's, or one deduction's),
// encryption_data → return_status, return_message, recurring_id, recurring_status. Only the
// caller's merchant and account are searched. An active or suspended subscription is cancelled and
// never charged again; a cancelled or finished one is refused with its current recurring_status.
import { codes, result, resultInfo } from "../domain/codes.js";
import { cancelSubscription } from "../schedule/subscriptions.js";
import { subscriptionEvent } from "../notify/events.js";
import { obj, optionalId, validate, withEnvelope } from "../http/fields.js";
import { type Body } from "../http/body.js";
import { text } from "../domain/field-text.js";
import type { Operation, Reply } from "../http/operation.js";
import type { Subscription } from "../domain/types.js";
import type { Repository } from "../domain/records.js";
import { gatewayOperation } from "../domain/gateway-operations.js";

const cancelRequest = obj({ recurring_id: optionalId(), order_no: optionalId() });

interface Scope {
  merchant_id: string;
  account_id: string;
}

/** The subscription both identifiers name (when both are given); by order_no, the most recent one. */
function findSubscription(records: Repository, scope: Scope, recurringId: string, orderNo: string): Subscription | undefined {
  const mine = records.subscriptionsOfAccount(scope.merchant_id, scope.account_id);
  const deductionOf = (s: Subscription) => records.transactionsByOrder(scope.merchant_id, orderNo).some((t) => t.recurring_id === s.recurring_id);
  return mine.findLast((s) => (!recurringId || s.recurring_id === recurringId) && (!orderNo || s.order_no === orderNo || deductionOf(s)));
}

const readCancel = (body: Body) =>
  validate(cancelRequest, body, text(body.recurring_id) || text(body.order_no) ? [] : [{ field: "recurring_id", message: "is required (or order_no)" }]);

export const subscriptionCancel: Operation = {
  ...gatewayOperation("subscriptionCancel"),
  request: withEnvelope(cancelRequest.shape),
  checkFields: readCancel,
  handle({ body, caller }, deps): Reply {
    const request = readCancel(body);
    const recurringId = request.recurring_id ?? "";
    const orderNo = request.order_no ?? "";
    const scope = { merchant_id: caller.merchant.merchant_id, account_id: caller.account.account_id };
    const { records } = deps.store;
    const answer = (status: string, message: string, sub: Subscription | undefined) => ({
      ...scope,
      encryption_data: "",
      return_status: status,
      return_message: message,
      recurring_id: sub?.recurring_id ?? recurringId,
      recurring_status: sub ? codes.recurring_status[sub.state] : "",
    });

    const sub = findSubscription(records, scope, recurringId, orderNo);
    if (!sub) {
      const named = [recurringId && `recurring_id ${recurringId}`, orderNo && `order_no ${orderNo}`].filter(Boolean).join(" and ");
      const key = "subscription_not_found";
      const info = resultInfo(key, `no subscription with ${named} for merchant ${scope.merchant_id} account ${scope.account_id}`);
      return { json: answer(codes.return_status.failed, info, undefined), status: result(key).http, changed: false, result: info };
    }
    const refusal = cancelSubscription(sub);
    if (refusal) return { json: answer(codes.return_status.failed, refusal.info, sub), changed: false, result: refusal.info };
    records.changed("subscriptions", sub);
    deps.notifier.emit(subscriptionEvent(records, sub, "subscription.cancelled"), deps.store);
    const json = answer(codes.return_status.ok, codes.return_status.ok_message, sub);
    return { json, changed: true, result: `${codes.return_status.ok_message}: ${sub.recurring_id} cancelled` };
  },
};

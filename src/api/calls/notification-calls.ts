// Operator calls: The notifications sent and to send: list, read, deliver now, resend, trigger one, check a receiver.
// Entries of the one table (src/api/operator-calls.ts); see OperatorCall for what each field means.
import { z } from "zod";
import { MALFORMED, type OperatorCall } from "../operator-call.js";
import { int, notification, receiverCheckReport } from "../operator-answers.js";
import { receiverCheckBody, triggerBody } from "../operator-bodies.js";

export const NOTIFICATION_CALLS = [
  {
    method: "get",
    path: "/__sandbox/notifications",
    operationId: "listNotifications",
    scope: "all",
    summary: "the notification outbox with every attempt",
    query: {
      merchant_id: "only this merchant's",
      event: "only this event's",
      state: "pending, delivered, failed or dropped",
      check: "only this receiver check's (its id)",
    },
    answer: z.strictObject({ notifications: z.array(notification) }),
    problems: { 400: "invalid_state: state is not pending, delivered, failed or dropped" },
  },
  {
    method: "get",
    path: "/__sandbox/notifications/{id}",
    operationId: "getNotification",
    scope: { record: "notification", param: "id" },
    summary: "one notification with every attempt",
    answer: z.strictObject({ notification }),
    problems: { 404: "notification_not_found" },
  },
  {
    method: "post",
    path: "/__sandbox/notifications/deliver",
    operationId: "deliverNotifications",
    scope: "own",
    summary: "attempts every notification due now, and waits for the receivers",
    answer: z.strictObject({ attempts: int, pending: int, delivered: int, failed: int, dropped: int }),
  },
  {
    method: "post",
    path: "/__sandbox/notifications/{id}/resend",
    operationId: "resendNotification",
    form: "/__sandbox/ui/notifications/{id}/resend",
    scope: "own",
    summary: "sends a notification again",
    answer: z.strictObject({ notification }),
    problems: { 404: "notification_not_found" },
  },
  {
    method: "post",
    path: "/__sandbox/notifications/trigger",
    operationId: "triggerNotification",
    scope: "own",
    body: triggerBody,
    summary: "a test notification to any URL (merchant_id, url, event, data, notify)",
    answer: z.strictObject({ notification }),
    status: 201,

    problems: { 400: `invalid_trigger: a field is missing or wrong (each named); ${MALFORMED}`, 404: "merchant_not_found (with --strict-merchants)" },
  },
  {
    method: "post",
    path: "/__sandbox/receiver-checks",
    operationId: "checkReceiver",
    scope: "own",
    body: receiverCheckBody,
    summary: "checks a merchant's notification receiver with signed, tampered and malformed notifications; answers the report",
    answer: receiverCheckReport,

    problems: {
      400: `invalid_check, invalid_url, unknown_merchant, invalid_key, transaction_not_found; ${MALFORMED}`,
      429: "busy: two checks run at a time per process, four wait (Retry-After)",
      500: "payment_not_created, check_failed: the check could not run",
    },
  },
] as const satisfies readonly OperatorCall[];

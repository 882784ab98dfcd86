// Operator calls: The notifications sent and to send: list, read, deliver now, resend, trigger one, check a receiver.
// Entries of the one table (src/api/operator-calls.ts); see OperatorCall for what each field means.
import { z } from "zod";
import { MALFORMED, type OperatorCall } from "../operator-call.js";
import { int, notification, receiverCheckReport } from "../operator-answers.js";
import { listenAnswerBody, receiverCheckBody, triggerBody } from "../operator-bodies.js";

const LISTEN_REFUSED =
  "listen_refused: the X-Sandgate-Merchant, X-Sandgate-Time and X-Sandgate-Signature headers do not prove the merchant's key (said alike for every reason)";

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
  {
    method: "get",
    path: "/__sandbox/listen",
    operationId: "listenNotifications",
    scope: "own",
    summary:
      "sandgate listen's stream (server-sent events): a merchant's notification attempts, each to deliver to its own receiver and answer; authenticated by the merchant's key, not ADMIN_TOKEN",
    answer: z.string(),
    text: "text/event-stream",
    open: "merchant key",
    problems: { 401: LISTEN_REFUSED, 429: "too_many_listeners: the merchant (4) or the process (256) has as many listeners as it takes" },
  },
  {
    method: "delete",
    path: "/__sandbox/listen/{listener}",
    operationId: "endListening",
    scope: "own",
    summary:
      "sandgate listen's goodbye (it stops): ends the stream of the listener the ready event named; when it was the merchant's last, its notifications go to their notify_url at once, with no grace period",
    answer: z.strictObject({
      ended: z
        .boolean()
        .describe(
          "false: the merchant has no listener of that id on the replica that answers (gone already; with replicas, the one that holds it is told and ends it)",
        ),
    }),
    open: "merchant key",
    problems: { 401: LISTEN_REFUSED },
  },
  {
    method: "post",
    path: "/__sandbox/listen/answers",
    operationId: "answerListenedNotification",
    scope: "own",
    body: listenAnswerBody,
    summary: "sandgate listen's report of its receiver's answer to an attempt it was handed: the attempt's outcome",
    answer: z.strictObject({ recorded: z.boolean().describe("false: no attempt of that id waits (answered already, or too late)") }),
    open: "merchant key",
    problems: { 400: `invalid_answer; ${MALFORMED}`, 401: LISTEN_REFUSED },
  },
] as const satisfies readonly OperatorCall[];

// The outbox: a notification is a record in state, added in the same synchronous step (and so the
// same commit) as the change it reports, then sent by the dispatcher. Pure: state, ids and now in;
// no I/O here, so time-driven domain code (the scheduler) can queue notifications too.
import type { Ids } from "../domain/ids.js";
import { signatureFields, signatureOf } from "../domain/signature.js";
import { secretKeyOf } from "../domain/merchants.js";
import type { AttemptOutcome, Notification, NotificationAttempt, NotificationBody } from "../domain/types.js";
import type { Repository } from "../domain/records.js";
import type { NotificationEvent, NotifyBehaviour } from "./notifier.js";
import { maskCardFields } from "../domain/masking.js";

/** data/signature-fields.json "notification".response: the body fields that enter encryption_data. */
const NOTIFICATION_SIGNED_FIELDS: readonly string[] = (() => {
  const entry = (signatureFields as unknown as Record<string, { response?: unknown } | undefined>).notification;
  if (!Array.isArray(entry?.response)) throw new Error('data/signature-fields.json: "notification.response" (a list of field names) is missing');
  return entry.response.map(String);
})();

const MAX_DELAY_SECONDS = 30 * 86_400;
const MAX_DUPLICATES = 10;

/** Scenario behaviour with safe numbers: a delay within 30 days, at most 10 duplicates. */
function normalise(b: NotifyBehaviour | undefined): Notification["behaviour"] {
  const delay = Number(b?.delay_seconds ?? 0);
  const duplicate = Math.trunc(Number(b?.duplicate ?? 0));
  return {
    delay_seconds: Number.isFinite(delay) ? Math.min(Math.max(delay, 0), MAX_DELAY_SECONDS) : 0,
    duplicate: Number.isFinite(duplicate) ? Math.min(Math.max(duplicate, 0), MAX_DUPLICATES) : 0,
    drop: b?.drop === true,
  };
}

/** A notification's body before it is signed. */
export type UnsignedBody = Omit<NotificationBody, "encryption_data">;

/** The body as sent: the fields, then encryption_data over NOTIFICATION_SIGNED_FIELDS with the key. */
export function signedBody(unsigned: UnsignedBody, key: string): NotificationBody {
  return { ...unsigned, encryption_data: signatureOf(NOTIFICATION_SIGNED_FIELDS, unsigned, key) };
}

/**
 * The body of one attempt: the notification's, with `sent_at` (this attempt's time, in the signed
 * fields) and signed again. created_at stays the event's on every retry; sent_at is what a receiver
 * holds a freshness window on, so it refuses a captured notification replayed later without
 * refusing Sandgate's genuine retries (the realistic schedule retries for ~31 h).
 */
export function attemptBody(payload: NotificationBody, sentAt: string, key: string): NotificationBody {
  const { notification_id, event, merchant_id, created_at, data } = payload;
  return signedBody({ notification_id, event, merchant_id, created_at, sent_at: sentAt, data }, key);
}

/**
 * A notification for the event, signed with `key`, not stored: enqueueNotification queues it, and a
 * receiver check (receiver-check/) sends it before recording it, so the two are built alike.
 */
export function buildNotification(ids: Ids, now: Date, event: NotificationEvent, key: string): Notification {
  const behaviour = normalise(event.notify);
  const unsigned: UnsignedBody = {
    notification_id: ids.hex("notification", 24, "ntf_"),
    event: event.event,
    merchant_id: event.merchantId,
    created_at: now.toISOString(),
    data: maskCardFields(event.data),
  };
  return {
    notification_id: unsigned.notification_id,
    merchant_id: event.merchantId,
    url: event.url,
    event: event.event,
    payload: signedBody(unsigned, key),
    created_at: unsigned.created_at,
    due_at: behaviour.drop ? "" : new Date(now.getTime() + behaviour.delay_seconds * 1000).toISOString(),
    state: behaviour.drop ? "dropped" : "pending",
    attempts: [],
    behaviour,
    deliveries_left: 1 + behaviour.duplicate,
    failures: 0,
    error: behaviour.drop ? "dropped by the scenario: never sent" : "",
  };
}

/** Adds a notification for the event to the outbox; none when the event has no url. */
export function enqueueNotification(records: Repository, ids: Ids, now: Date, event: NotificationEvent): Notification | undefined {
  if (!event.url) return undefined;
  const notification = buildNotification(ids, now, event, secretKeyOf(records, event.merchantId));
  records.addNotification(notification);
  return notification;
}

/** A pending notification whose next attempt is due by `now`. */
export const isDue = (n: Notification, now: Date) => n.state === "pending" && n.due_at !== "" && Date.parse(n.due_at) <= now.getTime();

/** Why the next scheduled attempt is made. */
export function nextReason(n: Notification): NotificationAttempt["reason"] {
  if (n.attempts.length === 0) return "first";
  return n.failures > 0 ? "retry" : "duplicate";
}

/**
 * Records an attempt and moves the notification on: a 2xx counts as one delivery (the next copy of
 * a duplicate is due at once); a failed scheduled attempt waits the schedule's next delay, or gives
 * up after the last one; a refused URL gives up at once. A resend never changes the retry schedule:
 * it only counts when it delivers something still owed.
 */
export function recordAttempt(n: Notification, attempt: NotificationAttempt, outcome: AttemptOutcome, delays: readonly number[], now: Date): void {
  n.attempts.push(attempt);
  const delivered = outcome.error === "";
  if (delivered) {
    if (n.deliveries_left === 0) return;
    n.deliveries_left--;
    n.failures = 0;
    n.error = "";
    n.state = n.deliveries_left === 0 ? "delivered" : "pending";
    n.due_at = n.deliveries_left === 0 ? "" : now.toISOString();
    return;
  }
  if (attempt.reason === "resend") return;
  n.failures++;
  const wait = delays[n.failures - 1];
  if (!outcome.retryable || wait === undefined) {
    n.state = "failed";
    n.due_at = "";
    n.error = outcome.retryable ? `gave up after ${n.failures} failed attempts in a row: ${outcome.error}` : outcome.error;
    return;
  }
  n.due_at = new Date(now.getTime() + wait * 1000).toISOString();
}

// The receiver check's probes as data: what each sends to the merchant's notify_url, what a correct
// receiver answers, and the published practice it stands for (Standard Webhooks, Stripe). Every
// probe is a notification built and signed as Sandgate's real ones (notify/outbox.ts); a probe
// only says how it departs from one: signed over other values, with another key, changed after
// signing, or sent as another body. run.ts sends them in this order, one at a time, and judges.
import type { NotificationEvent } from "../notify/notifier.js";
import type { UnsignedBody } from "../notify/outbox.js";
import type { Notification, NotificationBody } from "../domain/types.js";

export type Verdict = "pass" | "warning" | "fail";

/** An answer by its kind: the status class, or none at all (refused, reset, timed out). */
export type AnswerClass = "2xx" | "3xx" | "4xx" | "5xx" | "none";

/** The verdict for each kind of answer. */
type Rule = Record<AnswerClass, Verdict>;

const ACCEPT: Rule = { "2xx": "pass", "3xx": "fail", "4xx": "fail", "5xx": "fail", none: "fail" };
// a 5xx refuses too, but a forged notification should be turned away (401, 400), not crash the handler
const REFUSE: Rule = { "2xx": "fail", "3xx": "pass", "4xx": "pass", "5xx": "warning", none: "fail" };
const REFUSE_OR_WARN: Rule = { ...REFUSE, "2xx": "warning" };
const NO_SERVER_ERROR: Rule = { "2xx": "pass", "3xx": "fail", "4xx": "pass", "5xx": "fail", none: "fail" };
const CLIENT_ERROR: Rule = { "2xx": "fail", "3xx": "fail", "4xx": "pass", "5xx": "fail", none: "fail" };
const CLIENT_ERROR_OR_WARN: Rule = { ...CLIENT_ERROR, "2xx": "warning" };

/** How a probe's notification departs from a genuine one. */
interface Shape {
  /** changed before signing: the signature covers the change */
  unsigned?: (body: UnsignedBody) => UnsignedBody;
  /** signed with the other key instead of the merchant's */
  otherKey?: boolean;
  /** changed after signing: the signature no longer matches */
  tamper?: (body: NotificationBody) => Record<string, unknown>;
  /** sent as this body and Content-Type instead of the (tampered) payload as JSON */
  raw?: (json: string) => { content_type: string; body: string };
}

/** The events a check sends, all about the one payment (check-events.ts builds them). */
export interface CheckEvents {
  /** the payment's own event, payment.<state>, exactly as Sandgate sends it */
  payment: NotificationEvent;
  /** the same payment captured, and then refunded in full: the out-of-order pair */
  captured: NotificationEvent;
  refundProcessed: NotificationEvent;
  /** the payment's event with every text of its data filled, long and not only ASCII */
  large: NotificationEvent;
}

/** What a probe sends: a new notification, or one an earlier probe sent, again. */
export type Send = { event: NotificationEvent; shape?: Shape } | { again: Notification };

export interface ProbeContext {
  events: CheckEvents;
  /** the notifications earlier probes sent, by probe id */
  sent: ReadonlyMap<string, readonly Notification[]>;
}

export interface Probe {
  id: string;
  /** what is sent, for people */
  sent: string;
  /** what a correct receiver answers, for people */
  expects: string;
  rule: Rule;
  /** the published expectation it stands for */
  why: string;
  /** what a wrong answer of that kind means, where it says more than the answer itself */
  risk: Partial<Record<AnswerClass, string>>;
  sends(ctx: ProbeContext): Send[];
}

const UNKNOWN_EVENT = "receiver_check.unknown_event";
const STALE_HOURS = 24;
/** the realistic schedule's last retry, hours after the event */
const RETRY_HOURS = 31;
const hoursBefore = (iso: string, hours: number) => new Date(Date.parse(iso) - hours * 3_600_000).toISOString();

/** A probe signed as genuine but for the changes `shape` makes. */
const shaped =
  (shape: Shape, event: (e: CheckEvents) => NotificationEvent = (e) => e.payment) =>
  (ctx: ProbeContext): Send[] => [{ event: event(ctx.events), shape }];

const withData = (body: NotificationBody, field: string, value: string) => ({ ...body, data: { ...body.data, [field]: value } });
/** 10.00 → 1.00: a plausible amount, so only the signature can tell */
const smallerAmount = (amount: unknown) => (/^\d+\.\d{2}$/.test(String(amount)) && String(amount) !== "1.00" ? "1.00" : "0.01");
const withoutSignature = (body: NotificationBody) => Object.fromEntries(Object.entries(body).filter(([k]) => k !== "encryption_data"));

const SIGNATURE_WHY =
  "Verify the signature of the notification as received, with your own secret and in constant time over the whole value, before acting on it (Standard Webhooks: verify before processing; Stripe: constructEvent on the raw body); encryption_data covers what you act on (data.amount, data.payment_status, …: data/signature-fields.json)";
const FORGED = "a notification that is not signed with your key was acted on: anyone who can reach the URL can forge one";
const BAD_BODY_WHY =
  'A body that cannot be a notification is the sender\'s error: answer 4xx. A 5xx says "try again later" (Sandgate and Stripe retry it), a 2xx loses it without a trace';

export const PROBES: readonly Probe[] = [
  {
    id: "valid",
    sent: "the payment's notification, signed",
    expects: "2xx within 5 s",
    rule: ACCEPT,
    why: "Any 2xx acknowledges (Standard Webhooks, Stripe); answer within the sender's timeout (Sandgate: 5 s) and do the work afterwards (Standard Webhooks: respond quickly; Stripe: return 2xx before complex logic)",
    risk: {
      "4xx":
        "a genuine notification was refused: same key? same field list (data/signature-fields.json, notification.response, data.x read inside data)? created_at is the sandbox clock's (ahead of yours once POST /__sandbox/clock moved it)",
      "5xx": "a genuine notification failed: Sandgate will retry it, and then give up",
    },
    sends: (ctx) => [{ event: ctx.events.payment }],
  },
  {
    id: "duplicate",
    sent: "the same notification again (attempt 2)",
    expects: "2xx (acknowledges the duplicate)",
    rule: ACCEPT,
    why: "Message ids are idempotency keys: a sender delivers at least once, so the same notification_id arrives again; acknowledge it without acting twice (Standard Webhooks: webhook-id; Stripe: handle duplicate events)",
    risk: {
      "4xx": "a duplicate was refused: Sandgate keeps retrying it until it gives up",
      "5xx": "a duplicate failed (a unique key hit?): Sandgate keeps retrying it until it gives up",
    },
    sends: (ctx) => (ctx.sent.get("valid") ?? []).map((again) => ({ again })),
  },
  {
    id: "wrong_key",
    sent: "signed with another key",
    expects: "refuses (not 2xx)",
    rule: REFUSE,
    why: SIGNATURE_WHY,
    risk: { "2xx": FORGED },
    sends: shaped({ otherKey: true }),
  },
  {
    id: "tampered_amount",
    sent: "signed, then data.amount changed",
    expects: "refuses (not 2xx)",
    rule: REFUSE,
    why: SIGNATURE_WHY,
    risk: { "2xx": "an amount changed in transit was accepted: is data.amount in your field list? (it was not signed before)" },
    sends: shaped({ tamper: (b) => withData(b, "amount", smallerAmount(b.data.amount)) }),
  },
  {
    id: "tampered_status",
    sent: "signed, then data.payment_status changed",
    expects: "refuses (not 2xx)",
    rule: REFUSE,
    why: SIGNATURE_WHY,
    risk: { "2xx": "a state changed in transit was accepted: is data.payment_status in your field list? (it was not signed before)" },
    // 3000 is "paid": the change a forger wants
    sends: shaped({ tamper: (b) => withData(b, "payment_status", b.data.payment_status === "3000" ? "2000" : "3000") }),
  },
  {
    id: "signature_missing",
    sent: "encryption_data left out",
    expects: "refuses (not 2xx)",
    rule: REFUSE,
    why: SIGNATURE_WHY,
    risk: { "2xx": FORGED },
    sends: shaped({ tamper: withoutSignature }),
  },
  {
    id: "signature_not_hex",
    sent: "encryption_data: 64 characters, not hex",
    expects: "refuses (not 2xx)",
    rule: REFUSE,
    why: SIGNATURE_WHY,
    risk: { "2xx": FORGED },
    sends: shaped({ tamper: (b) => ({ ...b, encryption_data: "z".repeat(64) }) }),
  },
  {
    id: "signature_wrong_length",
    sent: "encryption_data less its last character",
    expects: "refuses (not 2xx)",
    rule: REFUSE,
    why: SIGNATURE_WHY,
    risk: {
      "2xx": `${FORGED} (is it compared by prefix?)`,
      "5xx": "the comparison failed on a shorter value (Node's timingSafeEqual throws on unequal lengths: compare lengths first)",
    },
    sends: shaped({ tamper: (b) => ({ ...b, encryption_data: b.encryption_data.slice(0, -1) }) }),
  },
  {
    id: "stale",
    sent: `signed, sent_at ${STALE_HOURS} h ago`,
    expects: "refuses (a warning if accepted)",
    rule: REFUSE_OR_WARN,
    why: "Refuse old messages so a captured one cannot be replayed (Stripe: a 300 s tolerance on the signed timestamp; Standard Webhooks: check webhook-timestamp). Hold the window on sent_at, which Sandgate signs anew on every attempt; the notification_id store is the other guard",
    risk: { "2xx": `a notification sent ${STALE_HOURS} h ago was accepted: a captured notification can be replayed` },
    sends: shaped({
      unsigned: (u) => ({ ...u, created_at: hoursBefore(u.created_at, STALE_HOURS), sent_at: hoursBefore(u.sent_at ?? u.created_at, STALE_HOURS) }),
    }),
  },
  {
    id: "late_retry",
    sent: `a genuine retry: created_at ${RETRY_HOURS} h ago, sent_at now, signed`,
    expects: "2xx",
    rule: ACCEPT,
    why: `Sandgate (like Stripe) retries a notification for hours, keeping created_at, the event's time: the realistic schedule's last attempt is ~${RETRY_HOURS} h after it. A freshness window belongs on sent_at, the attempt's own signed time`,
    risk: { "4xx": "a genuine late retry was refused: is the freshness window on created_at? Hold it on sent_at" },
    sends: shaped({ unsigned: (u) => ({ ...u, created_at: hoursBefore(u.created_at, RETRY_HOURS) }) }),
  },
  {
    id: "out_of_order",
    sent: "refund.processed, then payment.captured",
    expects: "2xx or 4xx to each, never 5xx or a hang",
    rule: NO_SERVER_ERROR,
    why: "Delivery order is not guaranteed: handle events in any order (Stripe: events may arrive out of order; Standard Webhooks), acknowledging or refusing, never failing",
    risk: { "5xx": "an event arriving before the one it follows made the receiver fail" },
    sends: (ctx) => [{ event: ctx.events.refundProcessed }, { event: ctx.events.captured }],
  },
  {
    id: "unknown_event",
    sent: `signed, event ${UNKNOWN_EVENT}`,
    expects: "2xx or 4xx, never 5xx",
    rule: NO_SERVER_ERROR,
    why: "New event types appear: acknowledge (or refuse) what you do not handle, never fail on it (Stripe: return 2xx for event types you do not use; Standard Webhooks)",
    risk: { "5xx": "an event name it does not know made the receiver fail" },
    sends: (ctx) => [{ event: { ...ctx.events.payment, event: UNKNOWN_EVENT } }],
  },
  {
    id: "large_body",
    sent: "signed, ~50 KB: every text of data filled",
    expects: "2xx",
    rule: ACCEPT,
    why: "Accept any genuine notification, whatever its size and characters: read the body as received, as UTF-8, and verify over it unchanged (Stripe and Standard Webhooks: verify over the raw body; a body parser's size limit or a re-encoding refuses genuine ones)",
    risk: { "4xx": "a genuine notification was refused: a body size limit (413) or a text encoding that breaks the signature?" },
    sends: (ctx) => [{ event: ctx.events.large }],
  },
  {
    id: "malformed_json",
    sent: "JSON cut off halfway (application/json)",
    expects: "4xx, never 5xx or a hang",
    rule: CLIENT_ERROR,
    why: BAD_BODY_WHY,
    risk: { "2xx": "a body that cannot be parsed was acknowledged", "5xx": "a body that cannot be parsed made the receiver fail" },
    sends: shaped({ raw: (json) => ({ content_type: "application/json", body: json.slice(0, Math.floor(json.length / 2)) }) }),
  },
  {
    id: "empty_body",
    sent: "an empty body (application/json)",
    expects: "4xx, never 5xx or a hang",
    rule: CLIENT_ERROR,
    why: BAD_BODY_WHY,
    risk: { "2xx": "an empty body was acknowledged", "5xx": "an empty body made the receiver fail" },
    sends: shaped({ raw: () => ({ content_type: "application/json", body: "" }) }),
  },
  {
    id: "wrong_content_type",
    sent: "the notification as text/plain",
    expects: "4xx (a warning if accepted), never 5xx or a hang",
    rule: CLIENT_ERROR_OR_WARN,
    why: `${BAD_BODY_WHY}. Sandgate always sends application/json; a handler whose JSON parser skipped this body must not fail on it`,
    risk: {
      "2xx": "a body declared text/plain was acknowledged (harmless if its signature was verified)",
      "5xx": "a body of another type made the receiver fail (a JSON parser that skipped it?)",
    },
    sends: shaped({ raw: (json) => ({ content_type: "text/plain; charset=utf-8", body: json }) }),
  },
];

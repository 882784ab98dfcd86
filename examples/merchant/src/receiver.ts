// The shop's notify_url: a node:http request listener that takes the gateway's notifications the
// way webhook senders ask (Standard Webhooks, Stripe): it reads the body as received, verifies its
// signature before trusting anything in it, keeps the notification ids it has seen (a duplicate is
// acknowledged, not processed again), answers at once and does the work afterwards. Nothing here
// knows about Sandgate: `sandgate check-receiver` attacks it in test/receiver.test.ts.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * What encryption_data covers, in order, from the gateway's documentation: the values concatenated,
 * then the secret key, SHA-256 in lowercase hex. "data.x" is the field x of data; a missing field
 * counts as empty.
 */
export const NOTIFICATION_FIELDS = [
  "notification_id",
  "event",
  "merchant_id",
  "created_at",
  "sent_at",
  "data.transaction_id",
  "data.order_no",
  "data.amount",
  "data.currency",
  "data.payment_status",
  "data.refund_reference_id",
  "data.refund_amount",
  "data.refund_status",
  "data.request_id",
  "data.payment_amount",
  "data.payment_currency",
  "data.status",
  "data.failure_type",
  "data.recurring_id",
  "data.recurring_status",
] as const;

export interface GatewayNotification {
  notification_id: string;
  event: string;
  merchant_id: string;
  created_at: string;
  /** when this attempt was sent: new, and signed, on every retry */
  sent_at: string;
  data: Record<string, unknown>;
}

export interface ReceiverOptions {
  /** the merchant's secret key */
  key: string;
  /** the work, done after the answer (an unknown event is the handler's to ignore) */
  onEvent: (notification: GatewayNotification) => void | Promise<void>;
  /** told of a failure in onEvent: the gateway was already answered, so nothing else hears of it */
  onError?: (err: unknown, notification: GatewayNotification) => void;
  /**
   * How old (or how far ahead) sent_at may be, default 300 s (Stripe's tolerance). sent_at is the
   * attempt's own time, signed anew on every retry: a captured notification replayed later is
   * refused, a genuine late retry is not (created_at, the event's time, stays the same on retries).
   */
  toleranceSeconds?: number;
  /** the largest body read, default 1 MB (a notification with long texts is tens of KB) */
  maxBytes?: number;
  /** the clock, for tests */
  now?: () => number;
}

const HEX64 = /^[0-9a-f]{64}$/;

function valueOf(body: Record<string, unknown>, field: string): string {
  const value = field.startsWith("data.") ? (body.data as Record<string, unknown> | undefined)?.[field.slice(5)] : body[field];
  return value === undefined || value === null ? "" : String(value);
}

/** Whether encryption_data is the key's signature of the body's values: a whole, constant-time comparison. */
export function signedWith(body: Record<string, unknown>, key: string): boolean {
  const got = body.encryption_data;
  if (typeof got !== "string" || !HEX64.test(got)) return false;
  const expected = createHash("sha256")
    .update(NOTIFICATION_FIELDS.map((f) => valueOf(body, f)).join("") + key)
    .digest("hex");
  return timingSafeEqual(Buffer.from(got), Buffer.from(expected));
}

type Answer = [status: number, text: string, accepted?: GatewayNotification];

export function createReceiver(options: ReceiverOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const toleranceMs = (options.toleranceSeconds ?? 300) * 1000;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const now = options.now ?? Date.now;
  // notification ids seen, with when: a real shop keeps them in its database (a unique key). One
  // older than the window can go: a replay of it is refused by its age.
  const seen = new Map<string, number>();
  const forgetOld = () => {
    for (const [id, at] of seen) if (now() - at > 2 * toleranceMs) seen.delete(id);
  };

  /** The answer to a complete body; only a verified, fresh, new notification is accepted. */
  function judge(raw: string): Answer {
    if (raw === "") return [400, "empty body"];
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return [400, "not JSON"];
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return [400, "not a notification"];
    const body = parsed as Record<string, unknown>;
    // nothing in the body is trusted, or even looked at, before this
    if (!signedWith(body, options.key)) return [401, "bad signature"];
    const sent = Date.parse(String(body.sent_at));
    if (!(Math.abs(now() - sent) <= toleranceMs)) return [400, "sent_at outside the accepted window"];
    const id = String(body.notification_id);
    if (seen.has(id)) return [200, "duplicate"];
    seen.set(id, now());
    forgetOld();
    return [200, "ok", body as unknown as GatewayNotification];
  }

  return (req, res) => {
    const answer = (status: number, text: string) => res.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(text);
    if (req.method !== "POST") return answer(405, "POST only");
    if (!/^application\/json\s*(;|$)/i.test(req.headers["content-type"] ?? "")) return answer(415, "application/json only");
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.on("error", () => res.destroy());
    req.on("end", () => {
      if (size > maxBytes) return answer(413, "body too large");
      const [status, text, accepted] = judge(Buffer.concat(chunks).toString("utf8"));
      answer(status, text);
      // the work starts once the answer is on its way: a slow handler never makes the gateway wait
      if (accepted) {
        setImmediate(() => {
          Promise.resolve()
            .then(() => options.onEvent(accepted))
            .catch((err: unknown) => (options.onError ?? ((e) => console.error("notification handler failed", e)))(err, accepted));
        });
      }
    });
  };
}

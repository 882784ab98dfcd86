// Notifications (docs/notifications.md): every state change of a payment, capture, refund, review,
// cancellation, payout or subscription that has a notify_url is POSTed there, signed, with a
// unique notification id. Callers only `emit`; delivery, retries and records live behind this.
import type { AttemptOutcome, Notification } from "../domain/types.js";
import type { Repository } from "../domain/records.js";
import type { Ids } from "../domain/ids.js";
import type { Listeners } from "./listeners.js";

/** Where a notification is queued: the records and ids of the unit of work that made the change. */
export interface Outbox {
  records: Repository;
  ids: Ids;
}

/** Scenario behaviour for one notification (scenario rules will set it; the operator trigger can too). */
export interface NotifyBehaviour {
  /** first attempt this many seconds (sandbox clock) after the change, instead of at once */
  delay_seconds?: number;
  /** extra deliveries of the same notification (same notification_id) after the first success */
  duplicate?: number;
  /** record it as dropped and never send it */
  drop?: boolean;
}

export interface NotificationEvent {
  merchantId: string;
  /** the notify_url given with the payment or payout */
  url: string;
  /** e.g. "payment.authorised", "refund.processed", "payout.completed", "subscription.deducted" */
  event: string;
  /** the resource as the merchant sees it (same fields as the operation's response) */
  data: Record<string, unknown>;
  notify?: NotifyBehaviour;
}

export interface Notifier {
  /** Queues a notification; does nothing when url is empty. Never throws, never blocks. */
  emit(event: NotificationEvent, into: Outbox): void;
  /** Starts sending what is due now and returns at once (the server's 1 s timer calls it). */
  tick(): void;
  /** `sandgate listen`'s connections: while a merchant has one, its notifications go through it */
  listeners: Listeners;
  /**
   * One attempt now, not recorded and never retried (a receiver check's probe): through the
   * merchant's listener while it has one (`via: "listen"`), else POSTed to the notification's url.
   */
  sendOnce(n: Notification, attempt: number): Promise<AttemptOutcome & { via?: "listen" }>;
  /** The port this server listens on: the loop guard refuses notify_urls that point back at it. */
  listening(port: number): void;
  /** Sends everything due now, waits for it and for what is already on its way; returns the attempts made. */
  drain(): Promise<number>;
  /** Sends one pending notification now if it is due (duplicates included) and waits. */
  deliver(notificationId: string): Promise<Notification | undefined>;
  /** Sends one notification again now, whatever its state, and waits; undefined when unknown. */
  resend(notificationId: string): Promise<Notification | undefined>;
  /** Waits for the attempts already on their way (their results are recorded); starts no new ones. */
  settle(): Promise<void>;
}

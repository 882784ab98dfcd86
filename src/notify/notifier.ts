// Notifications (PRODUCT.md §9): every state change of a payment, capture, refund, review,
// cancellation, payout or subscription that has a notify_url is POSTed there, signed, with a
// unique notification id. Callers only `emit`; delivery, retries and records live behind this.
export interface NotificationEvent {
  merchantId: string;
  /** the notify_url given with the payment or payout */
  url: string;
  /** e.g. "payment.authorised", "refund.processed", "payout.completed", "subscription.deducted" */
  event: string;
  /** the resource as the merchant sees it (same fields as the operation's response) */
  data: Record<string, unknown>;
}

export interface Notifier {
  /** Queues a notification; does nothing when url is empty. Never throws, never blocks. */
  emit(event: NotificationEvent): void;
}

// The events a receiver check sends, all about one payment and built by the same code as Sandgate's
// real notifications (notify/events.ts): the payment's own event, the pair sent out of order (a
// capture and a full refund that never happened: neither is stored, the payment is left as it is),
// and the payment's event with every text of its data filled.
import { paymentEvent, refundEvent } from "../notify/events.js";
import type { NotificationEvent } from "../notify/notifier.js";
import type { Repository } from "../domain/records.js";
import { refundOf } from "../domain/lifecycle.js";
import type { Refund, Transaction } from "../domain/types.js";
import type { CheckEvents } from "./probes.js";

/** Not only ASCII: a receiver that hashes or limits bytes where it should read text shows it here. */
const SAMPLE = "Rua Ærøskøbing 42 – São Paulo – 東京都 – Zürich – ";
const long = (chars: number) => SAMPLE.repeat(Math.ceil(chars / SAMPLE.length)).slice(0, chars);
const FRAUD_CHECKS = 60;

/** The data of a payment notification with every text filled, long: about 50 KB of UTF-8 JSON. */
function largeData(data: Record<string, unknown>): Record<string, unknown> {
  return {
    ...data,
    website: `https://shop.example/${"a".repeat(2_000)}`,
    antifraud_provider: long(500),
    shopper_phone: "+55 11 91234-5678",
    delivery_information: {
      delivery_address: long(4_000),
      delivery_city: long(1_000),
      delivery_country: "BR",
      delivery_firstname: long(1_000),
      delivery_lastname: long(1_000),
      delivery_postal_code: "01310-100",
      delivery_state: long(1_000),
    },
    fraud_check_result: Array.from({ length: FRAUD_CHECKS }, (_, i) => ({ check_items: `${i + 1} ${long(400)}`, status: "ACCEPT" })),
  };
}

/** A full refund of the payment, processed: what refund.processed would say of it (not stored). */
function processedRefund(tx: Transaction, earlier: number, now: Date): Refund {
  const at = now.toISOString();
  return refundOf(tx, earlier + 1, {
    refund_reference: `ARN${tx.transaction_id.replace(/\D/g, "").padEnd(15, "0").slice(0, 15)}`,
    refund_amount: tx.amount,
    refund_reason: "receiver check",
    state: "processed",
    refund_date: at,
    refund_processing_date: at,
    due_at: "",
    fate: "processed",
  });
}

export function checkEvents(tx: Transaction, records: Pick<Repository, "subscription" | "refundsOf">, now: Date, url: string): CheckEvents {
  const to = (e: NotificationEvent): NotificationEvent => ({ ...e, url, notify: undefined });
  const payment = to(paymentEvent(tx, records));
  return {
    payment,
    captured: to(paymentEvent({ ...tx, state: "paid" }, records, "payment.captured")),
    refundProcessed: to(refundEvent(processedRefund(tx, records.refundsOf(tx.transaction_id).length, now), { ...tx, state: "refunded" })),
    large: { ...payment, data: largeData(payment.data) },
  };
}

// The payout as the merchant sees it (response, operator view, notification data): every request
// field echoed in the interface document's order, bank_details without bank_code but with local_clearing_system,
// then the interface document's added fields. Numbers are JSON numbers; everything else is a string.
import type { Notifier, NotifyBehaviour, Outbox } from "./notifier.js";
import type { Payout } from "../domain/types.js";
import * as layout from "../domain/payout-fields.js";

/** "2026-11-22T10:00:00.000Z" → "2026-11-22T10:00:00+00:00": ISO 8601 with a numeric offset (UTC). */
const isoWithOffset = (iso: string): string => `${iso.slice(0, 19)}+00:00`;

/** The named values of a stored object, in the order of the names ("" for any that is missing). */
function pick<K extends string>(from: Partial<Record<K, string>> | undefined, names: readonly K[]): Record<K, string> {
  const out = {} as Record<K, string>;
  for (const n of names) out[n] = from?.[n] ?? "";
  return out;
}

export function payoutResponse(p: Payout): Record<string, unknown> {
  const { beneficiary: b, payer } = p.request;
  return {
    ...pick(p.request, layout.TOP_BEFORE_BENEFICIARY),
    beneficiary: {
      additional_info: pick(b.additional_info, layout.BENEFICIARY_ADDITIONAL_INFO),
      address: pick(b.address, layout.BENEFICIARY_ADDRESS),
      person_documents: b.person_documents.map((d) => ({ ...pick(d, layout.PERSON_DOCUMENT), labels: [...d.labels] })),
      bank_details: {
        ...pick(
          b.bank_details,
          layout.BANK_DETAILS.filter((f) => f !== layout.BANK_DETAILS_NOT_ECHOED),
        ),
        local_clearing_system: p.local_clearing_system,
      },
      ...pick(b, layout.BENEFICIARY_TEXT),
    },
    ...pick(p.request, layout.TOP_BEFORE_PAYER),
    payer: {
      additional_info: pick(payer.additional_info, layout.PAYER_ADDITIONAL_INFO),
      address: pick(payer.address, layout.PAYER_ADDRESS),
      ...pick(payer, layout.PAYER_TEXT),
    },
    ...pick(p.request, layout.TOP_AFTER_PAYER),
    encryption_data: "",
    amount_beneficiary_receives: p.amount_beneficiary_receives,
    amount_payer_pays: p.amount_payer_pays,
    created_at: isoWithOffset(p.created_at),
    last_updated_at: isoWithOffset(p.last_updated_at),
    failure_reason: p.failure_reason,
    failure_type: p.failure_type,
    fee_amount: p.fee_amount,
    fee_currency: p.fee_currency,
    payer_id: p.payer_id,
    transaction_id: p.transaction_id,
    short_reference_id: p.short_reference_id,
    status: p.status,
  };
}

/** payout.pending, payout.completed or payout.failed to the payout's notify_url (the notifier skips an empty one). */
export function notifyPayout(p: Payout, notifier: Pick<Notifier, "emit">, into: Outbox, notify?: NotifyBehaviour): void {
  if (!p.request.notify_url) return;
  const { encryption_data: _signature, ...data } = payoutResponse(p);
  notifier.emit({ merchantId: p.merchant_id, url: p.request.notify_url, event: `payout.${p.status.toLowerCase()}`, data, notify }, into);
}

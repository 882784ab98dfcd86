<?php
// The shop's notify_url: verifies each notification's signature before trusting anything in it,
// refuses one sent too long ago (sent_at, signed anew on every attempt: a replayed capture is
// stale) and acknowledges a notification id it has seen without processing it again.

namespace Shop;

final class Receiver
{
    public const FIELDS = ['notification_id', 'event', 'merchant_id', 'created_at', 'sent_at',
        'data.transaction_id', 'data.order_no', 'data.amount', 'data.currency', 'data.payment_status',
        'data.refund_reference_id', 'data.refund_amount', 'data.refund_status', 'data.request_id',
        'data.payment_amount', 'data.payment_currency', 'data.status', 'data.failure_type',
        'data.recurring_id', 'data.recurring_status'];
    public const TOLERANCE_SECONDS = 300;

    /** The notification's signed values: "data.x" is the field x of data. */
    public static function flat(array $body): array
    {
        $data = is_array($body['data'] ?? null) ? $body['data'] : [];
        $out = [];
        foreach (self::FIELDS as $field) {
            $out[$field] = str_starts_with($field, 'data.') ? ($data[substr($field, 5)] ?? null) : ($body[$field] ?? null);
        }
        return $out;
    }

    /**
     * What the receiver answers: [200, processed], [200, duplicate], [401, not ours], [400, stale or unreadable].
     * @param array<string, true> $seen the notification ids processed so far (added to)
     */
    public static function verdict(mixed $body, string $key, array &$seen, ?float $now = null): array
    {
        if (!is_array($body) || !is_string($body['encryption_data'] ?? null)) {
            return [400, 'unreadable'];
        }
        if (!hash_equals(Gateway::sign(self::FIELDS, self::flat($body), $key), $body['encryption_data'])) {
            return [401, 'not signed with our key'];
        }
        $sent = strtotime((string) ($body['sent_at'] ?? ''));
        if ($sent === false) {
            return [400, 'no sent_at'];
        }
        if (abs(($now ?? microtime(true)) - $sent) > self::TOLERANCE_SECONDS) {
            return [400, 'stale: sent too long ago'];
        }
        if (isset($seen[$body['notification_id']])) {
            return [200, 'duplicate'];
        }
        $seen[$body['notification_id']] = true;
        return [200, 'processed'];
    }
}

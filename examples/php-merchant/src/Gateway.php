<?php
// The shop's integration of the payment gateway, in plain PHP with curl: it signs every request,
// pays by card, by 3-D Secure and by the hosted checkout, captures, refunds, queries, pays out,
// and checks the gateway's signature on every answer and on the payer's return. Nothing here
// knows about Sandgate: point it at the real gateway and it works the same.

namespace Shop;

final class Gateway
{
    // the fields each signature covers, in order, from the gateway's documentation (docs/signatures.md)
    public const AUTHORISE_REQUEST = ['merchant_id', 'account_id', 'order_no', 'currency', 'amount', 'first_name', 'last_name',
        'card', 'expiration_year', 'expiration_month', 'security_code', 'shopper_email'];
    public const AUTHORISE_ANSWER = ['merchant_id', 'account_id', 'order_no', 'currency', 'amount', 'transaction_id', 'order_status', 'result_info'];
    public const ENVELOPE_REQUEST = ['merchant_id', 'account_id'];
    public const ENVELOPE_ANSWER = ['merchant_id', 'account_id', 'return_status'];
    public const PAYOUT_REQUEST = ['merchant_id', 'account_id', 'request_id', 'payment_amount', 'payment_currency'];
    public const PAYOUT_ANSWER = ['merchant_id', 'account_id', 'request_id', 'transaction_id', 'status'];

    private array $identity;

    public function __construct(private string $baseUrl, string $merchantId, string $accountId, private string $key)
    {
        $this->baseUrl = rtrim($baseUrl, '/');
        $this->identity = ['merchant_id' => $merchantId, 'account_id' => $accountId];
    }

    /** SHA-256 (lowercase hex) of the listed fields' values concatenated, then the secret key; a missing field is empty. */
    public static function sign(array $fields, array $values, string $key): string
    {
        $text = '';
        foreach ($fields as $field) {
            $text .= isset($values[$field]) ? (string) $values[$field] : '';
        }
        return hash('sha256', $text . $key);
    }

    public static function signedBy(array $fields, array $values, string $key): bool
    {
        return hash_equals(self::sign($fields, $values, $key), (string) ($values['encryption_data'] ?? ''));
    }

    /** The text children of the gateway's <respon> answer. */
    public static function readXml(string $xml): array
    {
        $out = [];
        foreach (simplexml_load_string($xml)->children() as $child) {
            if ($child->count() === 0) {
                $out[$child->getName()] = (string) $child;
            }
        }
        return $out;
    }

    private function post(string $path, array $body, array $signed, array $headers = []): array
    {
        $body = $this->identity + $body;
        $body['encryption_data'] = self::sign($signed, $body, $this->key);
        return Http::send('POST', $this->baseUrl . $path, $body, $headers);
    }

    private function checked(array $answer, array $fields, string $what): array
    {
        if (!self::signedBy($fields, $answer, $this->key)) {
            throw new GatewayError("the gateway's $what answer is not signed with our key");
        }
        return $answer;
    }

    /** A direct card payment: approved, declined, or waiting for 3-D Secure (challenge_url). */
    public function payByCard(string $orderNo, string $amount, string $currency, string $card, array $headers = [], ?string $notifyUrl = null): array
    {
        $body = ['order_no' => $orderNo, 'currency' => $currency, 'amount' => $amount, 'card' => $card, 'security_code' => '123',
            'expiration_month' => '12', 'expiration_year' => '2030', 'first_name' => 'Jane', 'last_name' => 'Doe',
            'shopper_email' => 'jane@example.com'];
        if ($notifyUrl !== null) {
            $body['notify_url'] = $notifyUrl;
        }
        $answer = $this->checked(self::readXml($this->post('/v1/authorise', $body, self::AUTHORISE_REQUEST, $headers)['body']), self::AUTHORISE_ANSWER, 'authorise');
        return ['status' => $answer['order_status'], 'approved' => $answer['order_status'] === '1', 'result_info' => $answer['result_info'],
            'transaction_id' => $answer['transaction_id'], 'challenge_url' => $answer['issuer_url'] ?? ''];
    }

    /** The hosted checkout: where the gateway's loading page sends the payer. */
    public function startCheckout(string $orderNo, string $amount, string $currency, string $returnUrl): string
    {
        $page = $this->post('/v1/checkout', ['order_no' => $orderNo, 'currency' => $currency, 'amount' => $amount, 'return_url' => $returnUrl], self::AUTHORISE_REQUEST)['body'];
        if (!preg_match('/<form[^>]*id="theForm"[^>]*action="([^"]+)"/', $page, $found)) {
            throw new GatewayError('the checkout page has no form to the hosted checkout');
        }
        return html_entity_decode($found[1]);
    }

    /** The payer's return to return_url: trusted only when its signature is ours. */
    public function readReturn(string $returnUrl): array
    {
        parse_str((string) parse_url($returnUrl, PHP_URL_QUERY), $params);
        if (!self::signedBy(self::AUTHORISE_ANSWER, $params, $this->key)) {
            throw new GatewayError("the payer's return is not signed with our key: ignore it");
        }
        return ['paid' => $params['order_status'] === '1', 'order_no' => $params['order_no'], 'transaction_id' => $params['transaction_id']];
    }

    private function batch(string $operation, string $listField, array $orders): array
    {
        $answer = json_decode($this->post("/v1/$operation", [$listField => $orders], self::ENVELOPE_REQUEST)['body'], true);
        return $this->checked($answer, self::ENVELOPE_ANSWER, $operation)[$listField];
    }

    public function capture(array $order, ?string $amount = null): array
    {
        [$result] = $this->batch('capture', 'capture_orders', [['amount' => $amount ?? $order['amount']] + $order]);
        return ['captured' => ($result['capture_status'] ?? '') === '1', 'message' => $result['error_message'] ?? ''];
    }

    public function refund(array $order, string $amount, string $reason): array
    {
        [$result] = $this->batch('refund', 'refund_orders', [$order + ['refund_amount' => $amount, 'refund_reason' => $reason]]);
        return ['accepted' => ($result['refund_status'] ?? '') === '1', 'reference' => $result['refund_reference_id'] ?? ''];
    }

    public function query(string $orderNo): array
    {
        $answer = json_decode($this->post('/v1/retrievalTrans', ['order_no' => $orderNo], self::ENVELOPE_REQUEST)['body'], true);
        return $this->checked($answer, self::ENVELOPE_ANSWER, 'query')['orders_list'];
    }

    public function refundsOf(string $orderNo): array
    {
        $answer = json_decode($this->post('/v1/retrievalRefund', ['order_no' => $orderNo], self::ENVELOPE_REQUEST)['body'], true);
        return $this->checked($answer, self::ENVELOPE_ANSWER, 'refund search')['refund_orders'];
    }

    public function payout(string $requestId, string $amount, string $currency, string $accountNumber): array
    {
        $body = ['request_id' => $requestId, 'payment_currency' => $currency, 'payment_amount' => $amount, 'payment_method' => 'SWIFT',
            'beneficiary' => ['first_name' => 'Ann', 'last_name' => 'Lee',
                'bank_details' => ['account_number' => $accountNumber, 'bank_country_code' => 'DE', 'swift_code' => 'DEUTDEFF']]];
        return $this->checked(json_decode($this->post('/v1/payout', $body, self::PAYOUT_REQUEST)['body'], true), self::PAYOUT_ANSWER, 'payout');
    }
}

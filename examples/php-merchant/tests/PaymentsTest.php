<?php
// The shop's payment flows against Sandgate: each answer's signature is checked by the shop.

use PHPUnit\Framework\TestCase;
use Shop\Gateway;
use Shop\GatewayError;
use Shop\Http;

final class PaymentsTest extends TestCase
{
    private const CARD = '4242424242424242';

    public function testACardPaymentIsApprovedAndItsAnswerIsSignedWithOurKey(): void
    {
        $payment = shop()->payByCard(orderNo('PHP-CARD'), '49.90', 'USD', self::CARD);
        $this->assertTrue($payment['approved']);
        $this->assertSame('0000:Success', $payment['result_info']);
    }

    public function testADeclinedCardAndACaptureOfItRefused(): void
    {
        $no = orderNo('PHP-DECL');
        $payment = shop()->payByCard($no, '20.00', 'USD', '4000000000000002');
        $this->assertFalse($payment['approved']);
        $this->assertStringStartsWith('D0005:', $payment['result_info']);
        $capture = shop()->capture(['transaction_id' => $payment['transaction_id'], 'order_no' => $no, 'currency' => 'USD', 'amount' => '20.00']);
        $this->assertFalse($capture['captured']);
        $this->assertStringStartsWith('E', $capture['message']);
    }

    public function testThreeDSecureThePayerPassesTheChallenge(): void
    {
        $no = orderNo('PHP-3DS');
        $payment = shop()->payByCard($no, '30.00', 'USD', '4000002760003184');
        $this->assertSame('-1', $payment['status']);
        // the payer at the issuer's page types the code (the docs: 1234 passes)
        $page = Http::send('POST', $payment['challenge_url'], null, ['accept' => 'application/json'], ['challenge_code' => '1234']);
        $this->assertSame('1', json_decode($page['body'], true)['order_status']);
        [$found] = shop()->query($no);
        $this->assertSame('2000', $found['payment_status']); // authorised: A10001 captures by hand
    }

    public function testTheHostedCheckoutSendsThePayerBackSigned(): void
    {
        $no = orderNo('PHP-CO');
        $page = shop()->startCheckout($no, '15.00', 'USD', 'https://shop.example/return');
        $paid = Http::send('POST', $page, null, [], ['card' => self::CARD, 'expiration_month' => '12', 'expiration_year' => '2031',
            'security_code' => '123', 'holder_name' => 'Jane Payer']);
        $this->assertSame(303, $paid['status']);
        $returned = shop()->readReturn($paid['location']);
        $this->assertTrue($returned['paid']);
        $this->assertSame($no, $returned['order_no']);
        $this->expectException(GatewayError::class);
        shop()->readReturn(str_replace('amount=15.00', 'amount=0.01', $paid['location']));
    }

    public function testPartialCapturePartialRefundThenTheQueryAndTheRefundSearch(): void
    {
        $no = orderNo('PHP-PART');
        $payment = shop()->payByCard($no, '50.00', 'USD', self::CARD);
        $order = ['transaction_id' => $payment['transaction_id'], 'order_no' => $no, 'currency' => 'USD', 'amount' => '50.00'];
        $this->assertTrue(shop()->capture($order, '30.00')['captured']);
        $refund = shop()->refund($order, '10.00', 'one item returned');
        $this->assertTrue($refund['accepted']);
        [$found] = shop()->query($no);
        $this->assertSame('4000', $found['payment_status']); // partially refunded
        [$listed] = shop()->refundsOf($no);
        $this->assertSame([$refund['reference'], '10.00', '50.00'], [$listed['refund_reference_id'], $listed['refund_amount'], $listed['amount']]);
    }

    public function testAPayoutToABankAccount(): void
    {
        $answer = shop()->payout(sprintf('%08x-%04x-4%03x-a%03x-%012x', random_int(0, 0xffffffff), random_int(0, 0xffff), random_int(0, 0xfff), random_int(0, 0xfff), random_int(0, 0xffffffffffff)), '100.00', 'EUR', '12345678');
        $this->assertContains($answer['status'], ['COMPLETED', 'PENDING']);
        $this->assertStringStartsWith('PO', $answer['transaction_id']);
    }

    public function testAnAnswerSomeoneElseSignedIsRefused(): void
    {
        $answer = ['merchant_id' => 'M10001', 'account_id' => 'A10001', 'order_no' => 'X', 'currency' => 'USD', 'amount' => '1.00',
            'transaction_id' => '1', 'order_status' => '1', 'result_info' => '0000:Success', 'encryption_data' => str_repeat('0', 64)];
        $this->assertFalse(Gateway::signedBy(Gateway::AUTHORISE_ANSWER, $answer, ACME[2]));
    }
}

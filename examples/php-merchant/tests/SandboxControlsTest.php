<?php
// Scenarios, outcomes and the clock, driven over plain HTTP as a CI job in any language would.

use PHPUnit\Framework\TestCase;

final class SandboxControlsTest extends TestCase
{
    private const CARD = '4242424242424242';

    public function testAMerchantBoundToTheDeclinesScenarioIsDeclinedThenApprovedOnceUnbound(): void
    {
        [$id, $merchant] = ownMerchant();
        $this->assertTrue($merchant->payByCard(orderNo('PHP-FIRST'), '10.00', 'EUR', self::CARD)['approved']);
        operator('PUT', "/scenarios/bindings/$id", ['name' => 'declines']);
        $this->assertFalse($merchant->payByCard(orderNo('PHP-BOUND'), '10.00', 'EUR', self::CARD)['approved']);
        operator('DELETE', "/scenarios/bindings/$id");
        $this->assertTrue($merchant->payByCard(orderNo('PHP-UNBOUND'), '10.00', 'EUR', self::CARD)['approved']);
    }

    public function testARequestNamesItsOutcomeWithXSandboxOutcome(): void
    {
        $payment = shop()->payByCard(orderNo('PHP-OUT'), '10.00', 'USD', self::CARD, ['X-Sandbox-Outcome' => 'insufficient_funds']);
        $this->assertSame('D0051:Insufficient funds', $payment['result_info']);
    }

    public function testARefundThatSettlesInAnHourSettlesWhenTheMerchantsClockMovesTwoHours(): void
    {
        [$id, $merchant] = ownMerchant();
        $no = orderNo('PHP-CLOCK');
        $payment = $merchant->payByCard($no, '30.00', 'USD', self::CARD);
        $order = ['transaction_id' => $payment['transaction_id'], 'order_no' => $no, 'currency' => 'USD', 'amount' => '30.00'];
        $merchant->capture($order);
        $merchant->refund($order, '5.17', 'late delivery'); // .17 settles an hour after it is accepted
        $this->assertSame('', $merchant->refundsOf($no)[0]['refund_processing_date']);
        $moved = operator('POST', '/clock', ['advance' => '2h', 'merchant_id' => $id]);
        $this->assertGreaterThanOrEqual(1, $moved['applied']);
        $this->assertNotSame('', $merchant->refundsOf($no)[0]['refund_processing_date']);
    }
}

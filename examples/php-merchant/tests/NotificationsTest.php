<?php
// The shop's notify_url (public/notify.php under PHP's built-in server), Sandgate's notifications
// delivered to it; a forged or replayed one is refused.

use PHPUnit\Framework\TestCase;
use Shop\Receiver;

final class NotificationsTest extends TestCase
{
    /** @var resource */
    private $server;
    private string $log;
    private string $url;

    protected function setUp(): void
    {
        $this->log = tempnam(sys_get_temp_dir(), 'notify');
        $socket = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr(strrchr(stream_socket_get_name($socket, false), ':'), 1);
        fclose($socket);
        $env = ['RECEIVER_LOG' => $this->log, 'SHOP_KEY' => ACME[2]] + getenv();
        $this->server = proc_open([PHP_BINARY, '-S', "127.0.0.1:$port", __DIR__ . '/../public/notify.php'], [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes, null, $env);
        $this->url = "http://127.0.0.1:$port/notify";
        for ($i = 0; $i < 100 && @fsockopen('127.0.0.1', $port) === false; $i++) {
            usleep(50_000);
        }
    }

    protected function tearDown(): void
    {
        proc_terminate($this->server);
        proc_close($this->server);
    }

    public function testThePaymentsNotificationArrivesSignedAndAForgedOrReplayedOneIsRefused(): void
    {
        $no = orderNo('PHP-NOTE');
        shop()->payByCard($no, '12.00', 'USD', '4242424242424242', [], $this->url);
        operator('POST', '/notifications/deliver');
        $received = array_map(fn ($line) => json_decode($line, true), array_filter(explode("\n", (string) file_get_contents($this->log))));
        $mine = array_values(array_filter($received, fn ($n) => ($n['data']['order_no'] ?? '') === $no));
        $this->assertCount(1, $mine);
        $note = $mine[0];
        $this->assertSame('payment.authorised', $note['event']);

        $seen = [];
        $forged = $note;
        $forged['data']['amount'] = '0.01';
        $this->assertSame([401, 'not signed with our key'], Receiver::verdict($forged, ACME[2], $seen));
        // the same notification again: acknowledged, not processed twice
        $seen = [$note['notification_id'] => true];
        $this->assertSame([200, 'duplicate'], Receiver::verdict($note, ACME[2], $seen));
        // captured and replayed ten minutes later: its sent_at is stale
        $fresh = [];
        $this->assertSame([400, 'stale: sent too long ago'], Receiver::verdict($note, ACME[2], $fresh, strtotime($note['sent_at']) + 600));
    }
}

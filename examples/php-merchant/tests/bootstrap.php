<?php
// Where Sandgate is (SANDGATE_URL, as docs/ci.md starts it: npx sandgate or the Docker image) and
// its operator API over plain HTTP: scenarios, outcomes and the clock, no Node on this runner.

require __DIR__ . '/../src/GatewayError.php';
require __DIR__ . '/../src/Http.php';
require __DIR__ . '/../src/Gateway.php';
require __DIR__ . '/../src/Receiver.php';

const ACME = ['M10001', 'A10001', 'acme_test_key_7f3a9c21']; // a fixture merchant of Sandgate: manual capture on A10001

function sandgateUrl(): string
{
    return rtrim(getenv('SANDGATE_URL') ?: 'http://127.0.0.1:8080', '/');
}

/** One call of Sandgate's operator API (/__sandbox/...): its JSON; an error status fails the test. */
function operator(string $method, string $path, ?array $body = null): array
{
    $token = getenv('ADMIN_TOKEN');
    // a call that changes something and takes no field is sent {} (a JSON object, never [])
    $json = $body ?? (in_array($method, ['GET', 'DELETE'], true) ? null : new stdClass());
    $answer = Shop\Http::send($method, sandgateUrl() . "/__sandbox$path", $json, $token ? ['authorization' => "Bearer $token"] : []);
    if ($answer['status'] >= 400) {
        throw new RuntimeException("$method $path answered {$answer['status']}: {$answer['body']}");
    }
    return json_decode($answer['body'], true) ?? [];
}

function orderNo(string $prefix): string
{
    return $prefix . '-' . bin2hex(random_bytes(6));
}

function shop(): Shop\Gateway
{
    return new Shop\Gateway(sandgateUrl(), ...ACME);
}

/** A merchant of this run only (Sandgate provisions it on first use, its key sk_test_<id>). */
function ownMerchant(): array
{
    $id = 'PHP-' . strtoupper(bin2hex(random_bytes(4)));
    return [$id, new Shop\Gateway(sandgateUrl(), $id, 'WEB', "sk_test_$id")];
}

<?php
// The shop's notify_url under PHP's built-in server (php -S 127.0.0.1:PORT public/notify.php): each
// notification verified (src/Receiver.php), the processed ones appended to RECEIVER_LOG as JSON
// lines, the ids seen kept beside it (each request is a process of its own).

require __DIR__ . '/../src/Gateway.php';
require __DIR__ . '/../src/Receiver.php';

$log = getenv('RECEIVER_LOG');
$seenFile = "$log.seen";
$seen = is_file($seenFile) ? json_decode((string) file_get_contents($seenFile), true) : [];
$body = json_decode((string) file_get_contents('php://input'), true);
[$status, $why] = Shop\Receiver::verdict($body, (string) getenv('SHOP_KEY'), $seen);
if ($why === 'processed') {
    file_put_contents($seenFile, json_encode($seen), LOCK_EX);
    file_put_contents($log, json_encode($body, JSON_UNESCAPED_SLASHES) . "\n", FILE_APPEND | LOCK_EX);
}
http_response_code($status);
echo $why;

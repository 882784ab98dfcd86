<?php
// The shop's HTTP: curl, JSON or form bodies, redirects never followed (a 303 to return_url is read, not taken).

namespace Shop;

final class Http
{
    /** @return array{status: int, body: string, location: string} */
    public static function send(string $method, string $url, array|object|null $json = null, array $headers = [], ?array $form = null): array
    {
        $curl = curl_init($url);
        $sent = [];
        foreach ($headers as $name => $value) {
            $sent[] = "$name: $value";
        }
        if ($json !== null) {
            curl_setopt($curl, CURLOPT_POSTFIELDS, json_encode($json, JSON_UNESCAPED_SLASHES));
            $sent[] = 'content-type: application/json';
        } elseif ($form !== null) {
            curl_setopt($curl, CURLOPT_POSTFIELDS, http_build_query($form));
        }
        $location = '';
        curl_setopt_array($curl, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_HTTPHEADER => $sent,
            CURLOPT_TIMEOUT => 30,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_HEADERFUNCTION => function ($curl, string $line) use (&$location): int {
                if (stripos($line, 'location:') === 0) {
                    $location = trim(substr($line, 9));
                }
                return strlen($line);
            },
        ]);
        $body = curl_exec($curl);
        if ($body === false) {
            throw new GatewayError('no answer from ' . $url . ': ' . curl_error($curl));
        }
        $status = curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
        curl_close($curl);
        return ['status' => $status, 'body' => $body, 'location' => $location];
    }
}

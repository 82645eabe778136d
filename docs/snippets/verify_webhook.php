<?php
// Verify a JoyBack webhook (PHP 7.4+, no dependencies).
//
// JoyBack-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>] where each v1 is
// HMAC-SHA256(your endpoint's secret, "<t>." + the raw body). Read the raw body with
// file_get_contents('php://input'). Accept if any v1 matches (two during a secret rotation).

function joyback_verify_webhook(string $body, string $header, string $secret, int $tolerance = 300): bool
{
    $timestamps = [];
    $signatures = [];
    foreach (explode(',', $header) as $item) {
        $pair = explode('=', $item, 2);
        if (count($pair) !== 2) {
            continue;
        }
        if ($pair[0] === 't') {
            $timestamps[] = $pair[1];
        } elseif ($pair[0] === 'v1') {
            $signatures[] = $pair[1];
        }
    }
    if (count($timestamps) !== 1 || !ctype_digit($timestamps[0])) {
        return false;
    }
    $timestamp = (int) $timestamps[0];
    if (abs(time() - $timestamp) > $tolerance) {
        return false;
    }
    $expected = hash_hmac('sha256', $timestamp . '.' . $body, $secret);
    foreach ($signatures as $signature) {
        if (hash_equals($expected, $signature)) {
            return true;
        }
    }
    return false;
}

if (PHP_SAPI === 'cli' && realpath($argv[0]) === __FILE__) {
    // php verify_webhook.php "<JoyBack-Signature header>" < body.json   (secret in JOYBACK_WEBHOOK_SECRET)
    $valid = joyback_verify_webhook(stream_get_contents(STDIN), $argv[1], getenv('JOYBACK_WEBHOOK_SECRET'));
    echo $valid ? "valid\n" : "invalid\n";
    exit($valid ? 0 : 1);
}

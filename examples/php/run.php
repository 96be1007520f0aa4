<?php
// Runs one operation of merchant_warrior.php and prints the gateway's answer as JSON.
//   php run.php OPERATION [name=value ...]
// The account comes from the environment (MW_BASE_URL, MW_MERCHANT_UUID, MW_API_KEY,
// MW_PASSPHRASE); test/examples/clients.test.ts passes the sandbox's, read from the spec.
require __DIR__ . '/merchant_warrior.php';

$operation = $argv[1] ?? '';
$args = [];
foreach (array_slice($argv, 2) as $pair) {
    [$name, $value] = explode('=', $pair, 2);
    $args[$name] = $value;
}
$env = fn (string $name) => getenv($name) !== false ? getenv($name) : throw new RuntimeException("$name is not set");
$mw = new MerchantWarrior($env('MW_BASE_URL'), $env('MW_MERCHANT_UUID'), $env('MW_API_KEY'), $env('MW_PASSPHRASE'));
$order = fn () => ['amount' => $args['amount'], 'currency' => $args['currency'], 'product' => $args['product'] ?? 'Example order'];
$card = fn () => ['number' => $args['card'], 'expiry' => $args['expiry'], 'csc' => $args['csc'] ?? '', 'name' => $args['name'] ?? 'Jane Citizen'];

$answer = match ($operation) {
    'purchase' => $mw->cardPayment('processCard', $order(), $card()),
    'authorise' => $mw->cardPayment('processAuth', $order(), $card()),
    'capture' => $mw->capture($args['transactionID'], $args['amount'], $args['currency']),
    'refund' => $mw->refund($args['transactionID'], $args['amount'], $args['currency']),
    'void' => $mw->onTransaction('processVoid', $args['transactionID']),
    'queryCard' => $mw->onTransaction('queryCard', $args['transactionID']),
    'addCard' => $mw->addCard($card()),
    'cardInfo' => $mw->cardInfo($args['cardID']),
    'tokenPurchase' => $mw->tokenPurchase($args['cardID'], $order(), $args['cardKey'] ?? null, $args['cardKeyReplace'] ?? null),
    'getSettlement' => $mw->settlement($args['from'], $args['to']),
    default => throw new RuntimeException("unknown operation '$operation'"),
};
echo json_encode($answer), "\n";

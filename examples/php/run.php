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
// An argument the operation cannot go without: named in one line on stderr, exit 1, when it is missing.
function need(array $args, string $name, string $operation): string
{
    if (!isset($args[$name])) {
        fwrite(STDERR, "$operation needs $name=... (php run.php $operation name=value ...)\n");
        exit(1);
    }
    return $args[$name];
}
$env = fn (string $name) => getenv($name) !== false ? getenv($name) : throw new RuntimeException("$name is not set");
$mw = new MerchantWarrior($env('MW_BASE_URL'), $env('MW_MERCHANT_UUID'), $env('MW_API_KEY'), $env('MW_PASSPHRASE'));
$order = fn () => ['amount' => need($args, 'amount', $operation), 'currency' => need($args, 'currency', $operation), 'product' => $args['product'] ?? 'Example order'];
$card = fn () => ['number' => need($args, 'card', $operation), 'expiry' => need($args, 'expiry', $operation), 'csc' => $args['csc'] ?? '', 'name' => $args['name'] ?? 'Jane Citizen'];

$answer = match ($operation) {
    'purchase' => $mw->cardPayment('processCard', $order(), $card()),
    'authorise' => $mw->cardPayment('processAuth', $order(), $card()),
    'capture' => $mw->capture(need($args, 'transactionID', $operation), need($args, 'amount', $operation), need($args, 'currency', $operation)),
    'refund' => $mw->refund(need($args, 'transactionID', $operation), need($args, 'amount', $operation), need($args, 'currency', $operation)),
    'void' => $mw->onTransaction('processVoid', need($args, 'transactionID', $operation)),
    'queryCard' => $mw->onTransaction('queryCard', need($args, 'transactionID', $operation)),
    'addCard' => $mw->addCard($card()),
    'cardInfo' => $mw->cardInfo(need($args, 'cardID', $operation)),
    'tokenPurchase' => $mw->tokenPurchase(need($args, 'cardID', $operation), $order(), $args['cardKey'] ?? null, $args['cardKeyReplace'] ?? null),
    'getSettlement' => $mw->settlement(need($args, 'from', $operation), need($args, 'to', $operation)),
    default => throw new RuntimeException("unknown operation '$operation'"),
};
echo json_encode($answer), "\n";

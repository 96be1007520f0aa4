<?php
// Reads generated/hash-vectors.json on stdin and prints, as JSON, the preimage and hash this client
// computes for each vector of a recipe and form it signs with; test/examples/hashes.test.ts compares.
require __DIR__ . '/merchant_warrior.php';

$computed = [];
foreach (json_decode(stream_get_contents(STDIN), true)['vectors'] as $v) {
    $in = $v['inputs'];
    $preimage = match ([$v['recipe'], $v['form']]) {
        ['transaction', 'current'] => MerchantWarrior::transactionPreimage($v['passphrase'], $in['merchantUUID'], $in['transactionAmount'], $in['transactionCurrency']),
        ['query', 'current'] => MerchantWarrior::queryPreimage($v['passphrase'], $in['merchantUUID'], $in['transactionID'] ?? $in['transactionReferenceID']),
        ['settlement', 'current'] => MerchantWarrior::settlementPreimage($v['passphrase'], $in['merchantUUID'], $in['settlementFrom'], $in['settlementTo']),
        default => null,
    };
    if ($preimage !== null) {
        $computed[] = ['recipe' => $v['recipe'], 'form' => $v['form'], 'preimage' => $preimage, 'hash' => md5($preimage)];
    }
}
echo json_encode($computed), "\n";

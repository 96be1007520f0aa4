<?php
// A small client of the gateway's form-encoded / XML mode, written the way the PHP integrations
// build their requests:
// - digistorm/omnipay-merchant-warrior@adb9d250dbed3ec326275c7043ca4103726bba15:src/Message/AbstractRequest.php
//   (#sendData: http_build_query body, Content-Type application/x-www-form-urlencoded, Accept
//   text/xml, simplexml_load_string; #getTransactionHash: the inner-md5 transaction hash) and
//   src/Message/PurchaseRequest.php (#getData: processCard's fields, `method` in the body, /post/);
// - kevupton/merchant-warrior@971db712dd5d85f61127744227ebb83f46967ddf:src/Kevupton/MerchantWarrior/MerchantWarrior.php
//   (#sendRequest: vault methods POST to /token/{method} without a `method` field; #hashCustomFields:
//   the query hash in the same inner-md5 form).
// Only PHP's curl and SimpleXML: no Composer package (no Packagist registry is reachable here).

final class MerchantWarrior
{
    public function __construct(
        private string $baseUrl,
        private string $merchantUUID,
        private string $apiKey,
        private string $passphrase,
    ) {
    }

    // --- Hashes (x-hash-recipes; generated/hash-vectors.json holds their published vectors) ---

    /** transaction: md5(lower(md5(passphrase) + merchantUUID + amount + currency)). */
    public static function transactionPreimage(string $passphrase, string $uuid, string $amount, string $currency): string
    {
        return strtolower(md5($passphrase) . $uuid . $amount . $currency);
    }

    /** query: md5(lower(md5(passphrase) + merchantUUID + (transactionID or transactionReferenceID))). */
    public static function queryPreimage(string $passphrase, string $uuid, string $transactionID): string
    {
        return strtolower(md5($passphrase) . $uuid . $transactionID);
    }

    /** settlement: md5(md5(passphrase) + lower(merchantUUID) + from + to): only the uuid is lowercased. */
    public static function settlementPreimage(string $passphrase, string $uuid, string $from, string $to): string
    {
        return md5($passphrase) . strtolower($uuid) . $from . $to;
    }

    private function transactionHash(string $amount, string $currency): string
    {
        return md5(self::transactionPreimage($this->passphrase, $this->merchantUUID, $amount, $currency));
    }

    // --- Operations: each builds its body as Omnipay's getData does, then posts it ---

    /** processCard or processAuth with card data (Omnipay PurchaseRequest#getData + #getCardData). */
    public function cardPayment(string $method, array $order, array $card): array
    {
        $data = [
            'method' => $method,
            'merchantUUID' => $this->merchantUUID,
            'apiKey' => $this->apiKey,
            'transactionAmount' => $order['amount'],
            'transactionCurrency' => $order['currency'],
            'transactionProduct' => $order['product'],
            'storeID' => null, // http_build_query leaves nulls out, as Omnipay's unset parameters are
            'custom1' => $order['custom1'] ?? null,
            'custom2' => null,
            'custom3' => null,
            'hash' => $this->transactionHash($order['amount'], $order['currency']),
        ];
        return $this->post('/post/', array_merge($data, [
            'customerName' => $card['name'],
            'customerCountry' => 'AU',
            'customerState' => 'QLD',
            'customerCity' => 'Brisbane',
            'customerAddress' => '123 Test Street',
            'customerPostCode' => '4000',
            'customerEmail' => null,
            'customerPhone' => null,
            'paymentCardNumber' => $card['number'],
            'paymentCardExpiry' => $card['expiry'],
            'paymentCardName' => $card['name'],
            'paymentCardCSC' => $card['csc'],
        ]));
    }

    public function capture(string $transactionID, string $amount, string $currency): array
    {
        return $this->post('/post/', [
            'method' => 'processCapture',
            'merchantUUID' => $this->merchantUUID,
            'apiKey' => $this->apiKey,
            'transactionAmount' => $amount,
            'transactionCurrency' => $currency,
            'transactionID' => $transactionID,
            'captureAmount' => $amount,
            'hash' => $this->transactionHash($amount, $currency),
        ]);
    }

    public function refund(string $transactionID, string $amount, string $currency): array
    {
        return $this->post('/post/', [
            'method' => 'refundCard',
            'merchantUUID' => $this->merchantUUID,
            'apiKey' => $this->apiKey,
            'transactionAmount' => $amount,
            'transactionCurrency' => $currency,
            'transactionID' => $transactionID,
            'refundAmount' => $amount,
            'hash' => $this->transactionHash($amount, $currency),
        ]);
    }

    /** processVoid and queryCard: the transaction and the query hash over it. */
    public function onTransaction(string $method, string $transactionID): array
    {
        return $this->post('/post/', [
            'method' => $method,
            'merchantUUID' => $this->merchantUUID,
            'apiKey' => $this->apiKey,
            'transactionID' => $transactionID,
            'hash' => md5(self::queryPreimage($this->passphrase, $this->merchantUUID, $transactionID)),
        ]);
    }

    /** addCard on /token/addCard, no `method` field and no hash (kevupton #addCard, #sendRequest). */
    public function addCard(array $card): array
    {
        return $this->post('/token/addCard', [
            'cardName' => $card['name'],
            'cardNumber' => $card['number'],
            'cardExpiryMonth' => substr($card['expiry'], 0, 2),
            'cardExpiryYear' => substr($card['expiry'], 2, 2),
            'merchantUUID' => $this->merchantUUID,
            'apiKey' => $this->apiKey,
        ]);
    }

    public function cardInfo(string $cardID): array
    {
        return $this->post('/token/cardInfo', [
            'cardID' => $cardID,
            'merchantUUID' => $this->merchantUUID,
            'apiKey' => $this->apiKey,
        ]);
    }

    /** processCard on /token/processCard with a stored card; cardKey (and its replacement) when given. */
    public function tokenPurchase(string $cardID, array $order, ?string $cardKey, ?string $cardKeyReplace): array
    {
        return $this->post('/token/processCard', [
            'transactionAmount' => $order['amount'],
            'transactionCurrency' => $order['currency'],
            'transactionProduct' => $order['product'],
            'customerName' => 'Jane Citizen',
            'customerCountry' => 'AU',
            'cardID' => $cardID,
            'cardKey' => $cardKey,
            'cardKeyReplace' => $cardKeyReplace,
            'hash' => $this->transactionHash($order['amount'], $order['currency']),
            'merchantUUID' => $this->merchantUUID,
            'apiKey' => $this->apiKey,
        ]);
    }

    public function settlement(string $from, string $to): array
    {
        return $this->post('/post/', [
            'method' => 'getSettlement',
            'merchantUUID' => $this->merchantUUID,
            'apiKey' => $this->apiKey,
            'settlementFrom' => $from,
            'settlementTo' => $to,
            'hash' => md5(self::settlementPreimage($this->passphrase, $this->merchantUUID, $from, $to)),
        ]);
    }

    // --- The wire ---

    /** Posts the fields form-encoded and reads the answer: XML elements by name, or a file's bytes. */
    private function post(string $path, array $fields): array
    {
        $curl = curl_init($this->baseUrl . $path);
        curl_setopt_array($curl, [
            CURLOPT_POST => true,
            CURLOPT_POSTFIELDS => http_build_query($fields),
            CURLOPT_HTTPHEADER => ['Content-Type: application/x-www-form-urlencoded', 'Accept: text/xml'],
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT => 30,
        ]);
        $body = curl_exec($curl);
        if ($body === false) {
            throw new RuntimeException('no answer from the gateway: ' . curl_error($curl));
        }
        $status = curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
        $type = (string) curl_getinfo($curl, CURLINFO_CONTENT_TYPE);
        curl_close($curl);
        if (!str_contains($type, 'xml')) {
            // getSettlement answers a zip file; anything else that is not XML is what it is.
            return ['httpStatus' => $status, 'contentType' => $type, 'bytes' => strlen($body), 'zip' => str_starts_with($body, "PK\x03\x04")];
        }
        $xml = simplexml_load_string($body);
        if ($xml === false || $xml->getName() !== 'mwResponse') {
            throw new RuntimeException("not an mwResponse answer ($status): " . substr($body, 0, 200));
        }
        // Omnipay reads each field as (string) $xml->name; an empty element reads as ''.
        $answer = [];
        foreach ($xml->children() as $element) {
            $answer[$element->getName()] = (string) $element;
        }
        return $answer;
    }
}

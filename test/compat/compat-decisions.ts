// Corpus entries the contract does not hold itself to, each with its reason. compat.test.ts checks
// that every id here is in the corpus, that entries not accepted really are refused, and runs
// everything else against every artifact.

/** Not this contract's interface: the seed describes the JSON API at {base_url}. */
export const outOfScope: Readonly<Record<string, string>> = {
  'ee-hosted-payment':
    'the hosted payment page, a form the shopper’s browser posts to another host (secure.…), not the API',
  'oc-hosted-payment':
    'the hosted payment page, a form the shopper’s browser posts to another host (secure.…), not the API',
  'lb-getaccesstoken':
    'a /transfer/ transparent-redirect interface the seed does not describe, from a programming exercise never shown to run',
  'lb-transfer-processcard':
    'a /transfer/ transparent-redirect interface the seed does not describe, from a programming exercise never shown to run',
};

/** Requests the contract refuses on purpose, because the seed or the evidence says the gateway does. */
export const notAccepted: Readonly<Record<string, string>> = {
  'ls-purchase': "transactionAmount '59.9': the seed writes card amounts as decimal strings with two decimals (§2)",
  'digi-purchase-test-vector':
    'a unit test whose credentials are null, which PHP drops: no merchantUUID or apiKey reaches the gateway',
  'el-processbatch':
    "batchNotifyURL 'www.easylodge.com.au/…' has no scheme: the contract types notify URLs as absolute URLs, as the seed types them (§4.1)",
};

/**
 * Requests the contract accepts, whose recorded outcome the sandbox does not reproduce, because what
 * decided it has changed since the client recorded it (the gateway's own test cards and their expiries).
 */
export const outcomeNotReproduced: Readonly<Record<string, string>> = {
  'am2011-purchase':
    "ActiveMerchant's 2011 suite paid with the test card 4564710000000004 expiring 02/19; the gateway's test cards now carry later expiries (gateway facts: 02/29), so the sandbox declines that expiry",
  'am2011-token-purchase-key-replace':
    "ActiveMerchant's 2011 suite paid with the test card 4564710000000004 expiring 02/19; the gateway's test cards now carry later expiries (gateway facts: 02/29), so the sandbox declines that expiry",
  'am2011-token-auth-key-replace':
    "ActiveMerchant's 2011 suite paid with the test card 4564710000000004 expiring 02/19; the gateway's test cards now carry later expiries (gateway facts: 02/29), so the sandbox declines that expiry",
  'am2011-token-capture': 'captures the 2011 token authorisation, declined for the same reason',
  'am2011-purchase-expired':
    "the 2011 gateway refused the expired card with 'MW - 006'; today's ActiveMerchant suite records it processed and declined ('Transaction declined'), which the sandbox answers (am-purchase-expired-card)",
  'kev-token-purchase':
    "pays with 4005550000000001 expiring 05/17, not one of the gateway's test cards, which the sandbox rejects as the real sandbox rejects unknown cards (gateway facts)",
  'kev-direct-purchase':
    "pays with 4005550000000001 expiring 05/17, not one of the gateway's test cards, which the sandbox rejects as the real sandbox rejects unknown cards (gateway facts)",
};

/**
 * Fields public clients send that no form of the operation declares: the gateway ignores them
 * (x-unknown-fields: ignore) and the request goes through. Each is named, so a field that starts or
 * stops being ignored is seen here.
 */
export const ignoredFields: Readonly<Record<string, string>> = {
  'processCard.custom_1': 'Gravity Forms sends custom_1..3 (underscored) empty; the gateway’s fields are custom1..3',
  'processCard.custom_2': 'Gravity Forms sends custom_1..3 (underscored) empty; the gateway’s fields are custom1..3',
  'processCard.custom_3': 'Gravity Forms sends custom_1..3 (underscored) empty; the gateway’s fields are custom1..3',
  'removeCard.cardkey':
    'a misspelt cardKey (kevupton); its sandbox test expects the card removed, so the gateway ignores it',
  'removeCard.hash': 'the vendor’s Magento module sends an empty hash; removeCard takes none',
  'processCard.mwWalletAToken':
    'the .NET SDK’s wallet token on a card-data purchase (mwApplePayToken); no form of processCard takes it beside card data',
};

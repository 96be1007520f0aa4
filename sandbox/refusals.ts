// The sandbox's refusals, one catalogue: each business rule the sandbox enforces has a named entry
// here with its code, worded through the stubs' message forms (server-stubs' `forms`), so that a
// handler names the entry and passes only what varies. Which shape the answer takes (responseCode a
// string on the body APIs, an integer on the NPP and payout paths) is the stubs' `refusalFields`.
import { numberedRefusals, type NumberedRefusal } from '../generated/spec-constants.ts';
import {
  entry,
  forms,
  refusalFields,
  refuse,
  type CatalogueEntry,
  type ErrorCode,
  type Refusal,
} from '../server-stubs/index.ts';

const fieldInvalid = (field: string, why: string) => refuse(-2, forms.invalid(field, why));

/** The stable code of each refusal the gateway words with its error number (x-numbered-refusals): one per name. */
const NUMBERED_CODES: Record<NumberedRefusal, ErrorCode> = {
  invalidTransactionID: 'PGW_ERR_SANDBOX_SVC_011_INVALID_TRANSACTION_ID',
  alreadyReversed: 'PGW_ERR_SANDBOX_SVC_016_ALREADY_REVERSED',
};

/** The numbered refusals' entries, one per name, so that each has its code (the catalogue page lists them). */
export const numberedRefusalEntries = Object.fromEntries(
  (Object.keys(numberedRefusals) as NumberedRefusal[]).map((name) => [
    name,
    entry(NUMBERED_CODES[name], `A refusal the gateway words with its error number (${name})`, () =>
      refuse(-2, numberedRefusals[name]),
    ),
  ]),
) as Record<NumberedRefusal, CatalogueEntry<[]>>;

export const sandboxRefusals = {
  // Stored things that are not there (or not this merchant's).
  noSuchCard: entry(
    'PGW_ERR_SANDBOX_NO_SUCH_CARD',
    "The card named is not stored (or is another merchant's)",
    (field?: string) => fieldInvalid(field ?? 'cardID', 'no such card'),
  ),
  cardKeyMismatch: entry('PGW_ERR_SANDBOX_CARD_KEY_MISMATCH', "The cardKey sent is not the stored card's", () =>
    fieldInvalid('cardKey', 'does not match the stored card'),
  ),
  noSuchBlacklistEntry: entry('PGW_ERR_SANDBOX_NO_SUCH_BLACKLIST_ENTRY', 'The card named is not blacklisted', () =>
    fieldInvalid('cardID', 'no such blacklist entry'),
  ),
  noSuchAgreement: entry('PGW_ERR_SANDBOX_NO_SUCH_AGREEMENT', 'The PayTo agreement named is not stored', () =>
    fieldInvalid('agreementIdentification', 'no such agreement'),
  ),
  noSuchPayment: entry(
    'PGW_ERR_SANDBOX_NO_SUCH_PAYMENT',
    'The PayTo payment named is not stored',
    (field: string) => fieldInvalid(field, 'no such payment'),
    '{field}',
  ),
  noSuchPayout: entry('PGW_ERR_SANDBOX_NO_SUCH_PAYOUT', 'The payout named is not stored', () =>
    fieldInvalid('payoutId', 'no such payout'),
  ),
  noSuchPayoutTransaction: entry(
    'PGW_ERR_SANDBOX_NO_SUCH_PAYOUT_TRANSACTION',
    'The payout transaction named is not stored',
    (field: string) => fieldInvalid(field, 'no such payout transaction'),
    '{field}',
  ),
  noSuchPayId: entry('PGW_ERR_SANDBOX_NO_SUCH_PAYID', 'The PayID named is not registered', () =>
    fieldInvalid('payId', 'no such PayID'),
  ),
  noSuchBatch: entry(
    'PGW_ERR_SANDBOX_NO_SUCH_BATCH',
    'The batch named is not stored',
    (field: string) => fieldInvalid(field, 'no such batch'),
    '{field}',
  ),
  noSuchDirectDebit: entry(
    'PGW_ERR_SANDBOX_NO_SUCH_DIRECT_DEBIT',
    'The direct debit named is not stored',
    (field: string) => fieldInvalid(field, 'no such direct debit'),
    '{field}',
  ),
  noSuchDirectDebitAuthorisation: entry(
    'PGW_ERR_SANDBOX_NO_SUCH_DIRECT_DEBIT_AUTHORISATION',
    'No direct debit authorisation has the fingerprint sent',
    () => fieldInvalid('fingerprint', 'no such direct debit authorisation'),
  ),
  noSuchTransaction: entry('PGW_ERR_SANDBOX_NO_SUCH_TRANSACTION', 'No transaction has the reference sent', () =>
    fieldInvalid('transactionReferenceID', 'no such transaction'),
  ),
  noSuchMerchantRequest: entry(
    'PGW_ERR_SANDBOX_NO_SUCH_MERCHANT_REQUEST',
    'No completed merchant request of the partner has the reference sent',
    (field: string = 'transactionID') => fieldInvalid(field, 'no such completed merchant request'),
  ),
  noNotifyAddress: entry(
    'PGW_ERR_SANDBOX_NO_NOTIFY_ADDRESS',
    'A notification is asked for an object that has no notification address of its own, and none is given',
    (what: string) => refuse(-3, forms.required('notifyURL', `: the ${what} has no notification address of its own`)),
    '{object}',
  ),
  noSuchPartnerRequest: entry(
    'PGW_ERR_SANDBOX_NO_SUCH_PARTNER_REQUEST',
    'No partner request has the reference sent',
    () => fieldInvalid('requestReference', 'no such request'),
  ),
  notPartnersMerchant: entry(
    'PGW_ERR_SANDBOX_NOT_PARTNERS_MERCHANT',
    'The merchant named is not a merchant of the calling partner',
    () => fieldInvalid('merchantUUID', 'not a merchant of this partner'),
  ),
  noThreeDSSession: entry(
    'PGW_ERR_SANDBOX_NO_3DS_SESSION',
    'The threeDSToken names no 3D Secure session of this merchant',
    () => fieldInvalid('threeDSToken', 'no 3D Secure session of this merchant has it (checkEnrollment opens one)'),
  ),
  notEnrolled: entry('PGW_ERR_SANDBOX_NOT_ENROLLED', "The threeDSToken's card is not enrolled in 3D Secure", () =>
    fieldInvalid('threeDSToken', 'its card is not enrolled in 3D Secure (checkEnrollment answered enrolled N)'),
  ),
  // The legacy direct-debit query words its own (as the gateway does).
  directDebitInvalidTransactionID: entry(
    'PGW_ERR_SANDBOX_DIRECT_DEBIT_INVALID_TRANSACTION_ID',
    'The legacy direct-debit query names no direct debit (worded as the gateway words it)',
    () => fieldInvalid('transactionID', 'Invalid transactionID'),
  ),
  // Amounts and cards.
  failsLuhn: entry(
    'PGW_ERR_SANDBOX_FAILS_LUHN',
    'A card number fails the Luhn check',
    (field: string) => fieldInvalid(field, 'fails the Luhn check'),
    '{field}',
  ),
  notPositive: entry(
    'PGW_ERR_SANDBOX_NOT_POSITIVE',
    'An amount is 0.00 where a payment needs more',
    (field: string) => fieldInvalid(field, 'must be more than 0.00'),
    '{field}',
  ),
  notPositiveCents: entry(
    'PGW_ERR_SANDBOX_NOT_POSITIVE_CENTS',
    'An amount in cents is 0 where a payment needs more',
    (field: string) => fieldInvalid(field, 'must be more than 0'),
    '{field}',
  ),
  notWholeCents: entry(
    'PGW_ERR_SANDBOX_NOT_WHOLE_CENTS',
    'An amount is not a whole number of cents',
    (field: string) => fieldInvalid(field, 'must be whole cents'),
    '{field}',
  ),
  captureExceedsAuthorised: entry(
    'PGW_ERR_SANDBOX_CAPTURE_EXCEEDS_AUTHORISED',
    'A capture is larger than what the authorisation has left',
    () => fieldInvalid('captureAmount', 'Capture amount is greater than the transaction amount'),
  ),
  refundExceedsCaptured: entry(
    'PGW_ERR_SANDBOX_REFUND_EXCEEDS_CAPTURED',
    'A refund is larger than what was captured and not yet refunded',
    () => fieldInvalid('refundAmount', 'Refund amount is greater than the amount captured'),
  ),
  refundExceedsPayment: entry(
    'PGW_ERR_SANDBOX_REFUND_EXCEEDS_PAYMENT',
    'A PayTo refund would take more than the payment',
    () => fieldInvalid('amount', 'refunds would exceed the payment'),
  ),
  aboveAgreementMaximum: entry(
    'PGW_ERR_SANDBOX_ABOVE_AGREEMENT_MAXIMUM',
    "A PayTo payment is above its agreement's maximum amount",
    (maximum: number) => fieldInvalid('transaction.amount', `above the agreement's maximum of ${maximum}`),
    500,
  ),
  cardNumberRequired: entry(
    'PGW_ERR_SANDBOX_CARD_NUMBER_REQUIRED',
    'A payment names neither a card number nor a stored card',
    () => refuse(-3, forms.required('paymentCardNumber')),
  ),
  cardNumberInField: entry(
    'PGW_ERR_SANDBOX_CARD_NUMBER_IN_FIELD',
    'A free-text field holds a card number (which would be stored unmasked)',
    (field: string) => fieldInvalid(field, 'must not hold a card number'),
    '{field}',
  ),
  // States.
  authorisationDeclined: entry(
    'PGW_ERR_SANDBOX_AUTHORISATION_DECLINED',
    'A capture or void of an authorisation that was declined',
    () => fieldInvalid('transactionID', 'the authorisation was declined'),
  ),
  transactionDeclined: entry(
    'PGW_ERR_SANDBOX_TRANSACTION_DECLINED',
    'A refund or void of a transaction that was declined',
    () => fieldInvalid('transactionID', 'the transaction was declined'),
  ),
  authorisationCaptured: entry(
    'PGW_ERR_SANDBOX_AUTHORISATION_CAPTURED',
    'A void of an authorisation that has been captured',
    () => fieldInvalid('transactionID', 'the authorisation has been captured; refund it instead'),
  ),
  agreementCancelled: entry(
    'PGW_ERR_SANDBOX_AGREEMENT_CANCELLED',
    'A change to a PayTo agreement that is cancelled',
    () => fieldInvalid('agreementIdentification', 'the agreement is cancelled'),
  ),
  agreementNotActive: entry(
    'PGW_ERR_SANDBOX_AGREEMENT_NOT_ACTIVE',
    'A PayTo payment on an agreement that is not active',
    (status: string) => fieldInvalid('agreementIdentification', `the agreement is ${status}`),
    '{status}',
  ),
  payIdTaken: entry('PGW_ERR_SANDBOX_PAYID_TAKEN', 'A PayID that is already registered', () =>
    fieldInvalid('payId', 'already registered'),
  ),
  noNotifyUrl: entry('PGW_ERR_SANDBOX_NO_NOTIFY_URL', 'A notification asked of a payout made without a notifyURL', () =>
    fieldInvalid('payoutId', 'the payout has no notifyURL'),
  ),
  noNotificationSent: entry(
    'PGW_ERR_SANDBOX_NO_NOTIFICATION_SENT',
    'The notification asked for has not been sent yet',
    () => fieldInvalid('transactionId', 'no notification has been sent'),
  ),
  unknownBsb: entry(
    'PGW_ERR_SANDBOX_UNKNOWN_BSB',
    'A BSB that no bank uses',
    (field: string) => fieldInvalid(field, 'no such BSB'),
    '{field}',
  ),
  settlementBackwards: entry(
    'PGW_ERR_SANDBOX_SETTLEMENT_BACKWARDS',
    'A settlement period that ends before it starts',
    () => fieldInvalid('settlementTo', 'is before settlementFrom'),
  ),
  transactionIdRequiredFor: entry(
    'PGW_ERR_SANDBOX_TRANSACTION_ID_REQUIRED_FOR',
    'A partner event that needs a transactionID names none',
    (event: string) => refuse(-3, forms.required('transactionID', ` for ${event}`)),
    '{event}',
  ),
  unsafeUrl: entry(
    'PGW_ERR_SANDBOX_UNSAFE_URL',
    'A notification URL the sandbox will not call (not http(s), a private address; docs/DEPLOY.md)',
    (field: string, why: string) => fieldInvalid(field, why),
    '{field}',
    '{why}',
  ),
  // Batch files.
  batchTooLarge: entry(
    'PGW_ERR_SANDBOX_BATCH_TOO_LARGE',
    "A batch file's CSV inflates beyond the limit",
    (bytes: number) => fieldInvalid('batchFile', `its CSV must not inflate to more than ${bytes} bytes`),
    10485760,
  ),
  batchNotOneCsv: entry('PGW_ERR_SANDBOX_BATCH_NOT_ONE_CSV', 'A batch file is not a base64 zip holding one CSV', () =>
    fieldInvalid('batchFile', 'must be a base64 zip holding one CSV file'),
  ),
  batchNotUtf8: entry('PGW_ERR_SANDBOX_BATCH_NOT_UTF8', "A batch file's CSV is not UTF-8", () =>
    fieldInvalid('batchFile', 'its CSV must be UTF-8'),
  ),
  batchColumns: entry(
    'PGW_ERR_SANDBOX_BATCH_COLUMNS',
    "A batch file's header row is not its layout's columns",
    (columns: readonly string[]) => fieldInvalid('batchFile', `its CSV columns must be ${columns.join(',')}`),
    ['{columns}'],
  ),
  batchTooManyLines: entry(
    'PGW_ERR_SANDBOX_BATCH_TOO_MANY_LINES',
    'A batch file holds more lines than a batch takes',
    (lines: number) => fieldInvalid('batchFile', `its CSV must not hold more than ${lines} lines`),
    10000,
  ),
  /** A batch line's field that fails its column's rule (the rule is the column's, not repeated per line). */
  batchLineShape: entry(
    'PGW_ERR_SANDBOX_BATCH_LINE_SHAPE',
    'A batch line has another number of fields than the file has columns',
    (count: number, columns: number) =>
      fieldInvalid('batchFile', `the line has ${count} fields; the file has ${columns} columns`),
    7,
    8,
  ),
  batchLineHoldsCard: entry(
    'PGW_ERR_SANDBOX_BATCH_LINE_HOLDS_CARD',
    'A batch line holds a card number in a field that must not',
    (line: number) => fieldInvalid('batchFile', `line ${line} must not hold a card number`),
    3,
  ),
  conflictsWithStored: entry(
    'PGW_ERR_SANDBOX_CONFLICTS_WITH_STORED',
    'A request would store a record that clashes with one stored (a key already used)',
    (field: string) => fieldInvalid(field, 'conflicts with a stored record'),
    '{field}',
  ),
  storeUnavailable: entry(
    'PGW_ERR_SANDBOX_STORE_UNAVAILABLE',
    'The sandbox cannot reach its database (answered 503 with Retry-After until it can)',
    (seconds: number) => refuse(-4, `The sandbox cannot reach its database: retry after ${seconds} s`, 503),
    5,
  ),
  conflictsWithStoredRecord: entry(
    'PGW_ERR_SANDBOX_CONFLICTS_WITH_STORED_RECORD',
    'A request clashes with a stored record and no single field says which',
    () => refuse(-2, 'The request conflicts with a stored record'),
  ),
  /**
   * A refusal the gateway words with its error number (x-numbered-refusals on Refusal), responseCode
   * -2: a family of entries, one code per number (`entries`, which the catalogue page lists).
   */
  numbered: Object.assign((name: NumberedRefusal) => numberedRefusalEntries[name](), {
    entries: numberedRefusalEntries,
  }),
  // Scenarios per request (sandbox/scenarios.ts, docs/SCENARIOS.md).
  scenarioOff: entry(
    'PGW_ERR_SANDBOX_SCENARIO_OFF',
    'A request names a scenario on a sandbox whose operator turned them off',
    (header: string, why: string) =>
      refuse(-2, forms.invalid(header, `scenarios are turned off on this sandbox (${why})`, 'Header')),
    'SVC-SANDBOX-SCENARIO',
    'PGW_SANDBOX_SCENARIOS=off',
  ),
  scenarioUnavailable: entry(
    'PGW_ERR_SANDBOX_SCENARIO_UNAVAILABLE',
    'The scenario unavailable: HTTP 503 with Retry-After, nothing processed',
    (seconds: number) => refuse(-4, `The gateway is unavailable (scenario unavailable): retry after ${seconds} s`, 503),
    1,
  ),
  scenarioNotProcessed: entry(
    'PGW_ERR_SANDBOX_SCENARIO_NOT_PROCESSED',
    'A fault that resets the connection before the request is processed: never sent, the request log shows it',
    (fault: string) => refuse(-4, `The connection was reset before the request was processed (scenario ${fault})`),
    'resetBeforeCommit',
  ),
  /** A browser's preflight from a page whose origin the sandbox does not allow (sandbox/cors.ts). */
  originNotAllowed: entry(
    'PGW_ERR_SANDBOX_ORIGIN_NOT_ALLOWED',
    "A browser's preflight from a page whose origin the sandbox does not allow",
    (setting: string) =>
      refuse(
        -2,
        forms.invalid('Origin', `must be an origin this sandbox allows (${setting}, docs/DEPLOY.md)`, 'Header'),
        403,
      ),
    'PGW_SANDBOX_ALLOWED_ORIGINS',
  ),
};

/** The control API's refusals (/_sandbox/…, its own OpenAPI document; responseCode an integer). */
export const controlRefusals = {
  required: entry(
    'PGW_ERR_CONTROL_FIELD_REQUIRED',
    'A control request misses a field',
    (field: string) => refuse(-3, forms.required(field)),
    '{field}',
  ),
  notAField: entry(
    'PGW_ERR_CONTROL_NOT_A_FIELD',
    'A control request sends a field it does not take',
    (field: string) => refuse(-2, forms.field(field, 'is not a field of this request')),
    '{field}',
  ),
  noField: entry('PGW_ERR_CONTROL_NO_FIELD', 'A control request that needs a field names none', () =>
    refuse(-3, forms.body('names no field')),
  ),
  invalid: entry(
    'PGW_ERR_CONTROL_FIELD_INVALID',
    "A control request's field breaks its rule",
    (field: string, why: string) => fieldInvalid(field, why),
    '{field}',
    '{rule}',
  ),
  internal: entry('PGW_ERR_CONTROL_INTERNAL', 'The control API failed', () =>
    refuse(-4, 'The sandbox could not process the request'),
  ),
  bodyTooLarge: entry(
    'PGW_ERR_CONTROL_BODY_TOO_LARGE',
    "A control request's body is larger than it takes",
    (limit: number) => refuse(-2, forms.body(`is invalid: larger than ${limit} bytes`)),
    65536,
  ),
  credentials: entry(
    'PGW_ERR_CONTROL_CREDENTIALS',
    "A control request's HTTP Basic credentials are missing or wrong",
    () => refuse(-1, 'Invalid credentials: send HTTP Basic with the merchantUUID (or partnerUUID) and its apiKey'),
  ),
  notJson: entry('PGW_ERR_CONTROL_NOT_JSON', "A control request's body is not JSON", () =>
    refuse(-2, forms.body('is not JSON')),
  ),
  bodyInvalid: entry(
    'PGW_ERR_CONTROL_BODY_INVALID',
    "A control request's body is not the object it takes",
    (why: string) => refuse(-2, forms.body(why)),
    '{why}',
  ),
  badAfter: entry('PGW_ERR_CONTROL_BAD_AFTER', 'The deliveries query `after` is not an integer of 0 or more', () =>
    fieldInvalid('after', 'must be an integer of 0 or more'),
  ),
  badWaitSeconds: entry(
    'PGW_ERR_CONTROL_BAD_WAIT_SECONDS',
    'The long poll `waitSeconds` is not an integer from 0 to 60',
    () => fieldInvalid('waitSeconds', 'must be an integer from 0 to 60'),
  ),
  badLatest: entry('PGW_ERR_CONTROL_BAD_LATEST', 'The deliveries query `latest` is not an integer from 1 to 100', () =>
    fieldInvalid('latest', 'must be an integer from 1 to 100'),
  ),
  noChaos: entry('PGW_ERR_CONTROL_NO_CHAOS', 'Chaos is stopped for an address that has none', () =>
    fieldInvalid('notifyURL', 'no chaos is set for this address'),
  ),
  noSuchDelivery: entry('PGW_ERR_CONTROL_NO_SUCH_DELIVERY', 'The delivery named is not one of this account', () =>
    fieldInvalid('id', 'no such delivery of this account'),
  ),
  resetsOwnOnly: entry('PGW_ERR_CONTROL_RESETS_OWN_ONLY', "A merchant asks to reset another merchant's data", () =>
    fieldInvalid('merchantUUID', 'a merchant resets its own data only'),
  ),
  noOperation: entry(
    'PGW_ERR_CONTROL_NO_OPERATION',
    'No control operation has this verb and path',
    (verb: string | undefined, pathname: string, document: string) =>
      refuse(-2, `No control operation ${verb} ${pathname}; see ${document}`, 404),
    'POST',
    '{path}',
    '/_sandbox/openapi.yaml',
  ),
  noSuchPayout: entry('PGW_ERR_CONTROL_NO_SUCH_PAYOUT', 'The payout named is not one of this merchant', () =>
    fieldInvalid('payoutId', 'no such payout of this merchant'),
  ),
  noSuchPayoutTransaction: entry(
    'PGW_ERR_CONTROL_NO_SUCH_PAYOUT_TRANSACTION',
    'The payout transaction named is not one of this merchant',
    () => fieldInvalid('transactionId', 'no such payout transaction of this merchant'),
  ),
  notReturnable: entry(
    'PGW_ERR_CONTROL_NOT_RETURNABLE',
    'A return of a payout transaction whose last attempt is not paid',
    (status: string) =>
      fieldInvalid(
        'transactionId',
        `its last attempt is ${status}; only a paid (approved) transaction can be returned`,
      ),
    '{status}',
  ),
  noSuchDirectDebit: entry(
    'PGW_ERR_CONTROL_NO_SUCH_DIRECT_DEBIT',
    'The direct debit named is not one of this merchant',
    () => fieldInvalid('transactionID', 'no such direct debit of this merchant'),
  ),
  alreadyDishonoured: entry('PGW_ERR_CONTROL_ALREADY_DISHONOURED', 'A dishonour of a debit already dishonoured', () =>
    fieldInvalid('transactionID', 'the debit is already dishonoured'),
  ),
};

/** A refusal of the body APIs: responseCode as a string, as the gateway sends it in JSON. */
export const refused = (r: Refusal) => refusalFields('string', r);
/** A refusal of the NPP and payout paths (and the control API): responseCode as an integer. */
export const refusedInteger = (r: Refusal) => refusalFields('integer', r);
/** The shape an operation's refusal schema names, for code that serves any operation (the stubs' choice). */
export const refusedAs = refusalFields;

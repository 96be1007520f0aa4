// The sandbox's refusals, one catalogue: each business rule the sandbox enforces has a named entry
// here with its code, worded through the stubs' message forms (server-stubs' `forms`), so that a
// handler names the entry and passes only what varies. Which shape the answer takes (responseCode a
// string on the body APIs, an integer on the NPP and payout paths) is the stubs' `refusalFields`.
import { numberedRefusals, type NumberedRefusal } from '../generated/spec-constants.ts';
import { forms, refusalFields, refuse, type Refusal } from '../server-stubs/index.ts';

const fieldInvalid = (field: string, why: string) => refuse(-2, forms.invalid(field, why));

export const sandboxRefusals = {
  // Stored things that are not there (or not this merchant's).
  noSuchCard: (field = 'cardID') => fieldInvalid(field, 'no such card'),
  cardKeyMismatch: () => fieldInvalid('cardKey', 'does not match the stored card'),
  noSuchBlacklistEntry: () => fieldInvalid('cardID', 'no such blacklist entry'),
  noSuchAgreement: () => fieldInvalid('agreementIdentification', 'no such agreement'),
  noSuchPayment: (field: string) => fieldInvalid(field, 'no such payment'),
  noSuchPayout: () => fieldInvalid('payoutId', 'no such payout'),
  noSuchPayoutTransaction: (field: string) => fieldInvalid(field, 'no such payout transaction'),
  noSuchPayId: () => fieldInvalid('payId', 'no such PayID'),
  noSuchBatch: (field: string) => fieldInvalid(field, 'no such batch'),
  noSuchDirectDebit: (field: string) => fieldInvalid(field, 'no such direct debit'),
  noSuchDirectDebitAuthorisation: () => fieldInvalid('fingerprint', 'no such direct debit authorisation'),
  noSuchTransaction: () => fieldInvalid('transactionReferenceID', 'no such transaction'),
  noSuchMerchantRequest: () => fieldInvalid('transactionID', 'no such completed merchant request'),
  noSuchPartnerRequest: () => fieldInvalid('requestReference', 'no such request'),
  notPartnersMerchant: () => fieldInvalid('merchantUUID', 'not a merchant of this partner'),
  noThreeDSSession: () =>
    fieldInvalid('threeDSToken', 'no 3D Secure session of this merchant has it (checkEnrollment opens one)'),
  notEnrolled: () =>
    fieldInvalid('threeDSToken', 'its card is not enrolled in 3D Secure (checkEnrollment answered enrolled N)'),
  // The legacy direct-debit query words its own (as the gateway does).
  directDebitInvalidTransactionID: () => fieldInvalid('transactionID', 'Invalid transactionID'),
  // Amounts and cards.
  failsLuhn: (field: string) => fieldInvalid(field, 'fails the Luhn check'),
  notPositive: (field: string) => fieldInvalid(field, 'must be more than 0.00'),
  notPositiveCents: (field: string) => fieldInvalid(field, 'must be more than 0'),
  notWholeCents: (field: string) => fieldInvalid(field, 'must be whole cents'),
  captureExceedsAuthorised: () =>
    fieldInvalid('captureAmount', 'Capture amount is greater than the transaction amount'),
  refundExceedsCaptured: () => fieldInvalid('refundAmount', 'Refund amount is greater than the amount captured'),
  refundExceedsPayment: () => fieldInvalid('amount', 'refunds would exceed the payment'),
  aboveAgreementMaximum: (maximum: number) =>
    fieldInvalid('transaction.amount', `above the agreement's maximum of ${maximum}`),
  cardNumberRequired: () => refuse(-3, forms.required('paymentCardNumber')),
  cardNumberInField: (field: string) => fieldInvalid(field, 'must not hold a card number'),
  // States.
  authorisationDeclined: () => fieldInvalid('transactionID', 'the authorisation was declined'),
  transactionDeclined: () => fieldInvalid('transactionID', 'the transaction was declined'),
  authorisationCaptured: () => fieldInvalid('transactionID', 'the authorisation has been captured; refund it instead'),
  agreementCancelled: () => fieldInvalid('agreementIdentification', 'the agreement is cancelled'),
  agreementNotActive: (status: string) => fieldInvalid('agreementIdentification', `the agreement is ${status}`),
  payIdTaken: () => fieldInvalid('payId', 'already registered'),
  noNotifyUrl: () => fieldInvalid('payoutId', 'the payout has no notifyURL'),
  noNotificationSent: () => fieldInvalid('transactionId', 'no notification has been sent'),
  unknownBsb: (field: string) => fieldInvalid(field, 'no such BSB'),
  settlementBackwards: () => fieldInvalid('settlementTo', 'is before settlementFrom'),
  transactionIdRequiredFor: (event: string) => refuse(-3, forms.required('transactionID', ` for ${event}`)),
  unsafeUrl: (field: string, why: string) => fieldInvalid(field, why),
  // Batch files.
  batchTooLarge: (bytes: number) => fieldInvalid('batchFile', `its CSV must not inflate to more than ${bytes} bytes`),
  batchNotOneCsv: () => fieldInvalid('batchFile', 'must be a base64 zip holding one CSV file'),
  batchNotUtf8: () => fieldInvalid('batchFile', 'its CSV must be UTF-8'),
  batchColumns: (columns: readonly string[]) =>
    fieldInvalid('batchFile', `its CSV columns must be ${columns.join(',')}`),
  batchTooManyLines: (lines: number) => fieldInvalid('batchFile', `its CSV must not hold more than ${lines} lines`),
  /** A batch line's field that fails its column's rule (the rule is the column's, not repeated per line). */
  batchLineShape: (count: number, columns: number) =>
    fieldInvalid('batchFile', `the line has ${count} fields; the file has ${columns} columns`),
  batchLineHoldsCard: (line: number) => fieldInvalid('batchFile', `line ${line} must not hold a card number`),
  conflictsWithStored: (field: string) => fieldInvalid(field, 'conflicts with a stored record'),
  storeUnavailable: (seconds: number) =>
    refuse(-4, `The sandbox cannot reach its database: retry after ${seconds} s`, 503),
  conflictsWithStoredRecord: () => refuse(-2, 'The request conflicts with a stored record'),
  /** A refusal the gateway words with its error number (x-numbered-refusals on Refusal), responseCode -2. */
  numbered: (name: NumberedRefusal) => refuse(-2, numberedRefusals[name]),
  /** A browser's preflight from a page whose origin the sandbox does not allow (sandbox/cors.ts). */
  originNotAllowed: (setting: string) =>
    refuse(
      -2,
      forms.invalid('Origin', `must be an origin this sandbox allows (${setting}, docs/DEPLOY.md)`, 'Header'),
      403,
    ),
} as const;

/** The control API's refusals (/_sandbox/…, its own OpenAPI document; responseCode an integer). */
export const controlRefusals = {
  required: (field: string) => refuse(-3, forms.required(field)),
  notAField: (field: string) => refuse(-2, forms.field(field, 'is not a field of this request')),
  noField: () => refuse(-3, forms.body('names no field')),
  invalid: (field: string, why: string) => fieldInvalid(field, why),
  internal: () => refuse(-4, 'The sandbox could not process the request'),
  bodyTooLarge: (limit: number) => refuse(-2, forms.body(`is invalid: larger than ${limit} bytes`)),
  credentials: () =>
    refuse(-1, 'Invalid credentials: send HTTP Basic with the merchantUUID (or partnerUUID) and its apiKey'),
  notJson: () => refuse(-2, forms.body('is not JSON')),
  bodyInvalid: (why: string) => refuse(-2, forms.body(why)),
  badAfter: () => fieldInvalid('after', 'must be an integer of 0 or more'),
  badWaitSeconds: () => fieldInvalid('waitSeconds', 'must be an integer from 0 to 60'),
  noSuchDelivery: () => fieldInvalid('id', 'no such delivery of this account'),
  resetsOwnOnly: () => fieldInvalid('merchantUUID', 'a merchant resets its own data only'),
  noOperation: (verb: string | undefined, pathname: string, document: string) =>
    refuse(-2, `No control operation ${verb} ${pathname}; see ${document}`, 404),
  noSuchPayout: () => fieldInvalid('payoutId', 'no such payout of this merchant'),
  noSuchPayoutTransaction: () => fieldInvalid('transactionId', 'no such payout transaction of this merchant'),
  notReturnable: (status: string) =>
    fieldInvalid('transactionId', `its last attempt is ${status}; only a paid (approved) transaction can be returned`),
  noSuchDirectDebit: () => fieldInvalid('transactionID', 'no such direct debit of this merchant'),
  alreadyDishonoured: () => fieldInvalid('transactionID', 'the debit is already dishonoured'),
} as const;

/** A refusal of the body APIs: responseCode as a string, as the gateway sends it in JSON. */
export const refused = (r: Refusal) => refusalFields('string', r);
/** A refusal of the NPP and payout paths (and the control API): responseCode as an integer. */
export const refusedInteger = (r: Refusal) => refusalFields('integer', r);
/** The shape an operation's refusal schema names, for code that serves any operation (the stubs' choice). */
export const refusedAs = refusalFields;

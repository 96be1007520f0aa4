// For every operation of the contract, a request the sandbox processes (responseCode 0 or above), on
// state made for it there and then through the typed client: a capture of a fresh authorisation, a
// refund of a fresh purchase, a query of a stored debit. Each call makes its own, so that a request
// that consumes its subject (a void, a removal) can be sent again. The coverage test sends each with
// every outcome of its operation; the isolation test sends many at once.
import { buildRequest, operation, requestExamples, type BuildOptions } from '../../contract/index.ts';
import type { GatewayClient } from '../../generated/client.ts';
import { type OperationId, operations } from '../../generated/operations.ts';
import type { ControlClient } from '../../sandbox/control-client.ts';

type Subject = () => Promise<BuildOptions>;
type Rec = Record<string, any>;

let unique = 0;
/** A reference no other request of this run has. */
export const fresh = (prefix: string) => `${prefix}-${process.pid}-${++unique}`;

const example = (id: OperationId): Rec => structuredClone(requestExamples(operation(id))[0]!.value);
const cardData = { paymentCardNumber: '4564710000000004', paymentCardExpiry: '0229', paymentCardName: 'Jane Citizen' };
const purchaseBody = (amount = '10.00') => ({
  transactionAmount: amount,
  transactionCurrency: 'AUD' as const,
  transactionProduct: 'Subject',
  transactionReferenceID: fresh('SUBJ'),
  customerName: 'Jane Citizen',
  customerCountry: 'AU' as const,
  customerState: 'QLD',
  customerCity: 'Brisbane',
  customerAddress: '1 Test St',
  customerPostCode: '4000',
  paymentCardCSC: '847',
  ...cardData,
});

/** A request of `id` the sandbox processes, signed, with the scenario header when given. */
export function subjectRequest(id: OperationId, options: BuildOptions, headers: Record<string, string> = {}) {
  return buildRequest(operation(id), { ...options, signBody: true, headers: { ...options.headers, ...headers } });
}

export function subjects(client: GatewayClient, control: ControlClient): Record<OperationId, Subject> {
  const ok = <T extends Rec>(answer: unknown, what: string): T => {
    const a = answer as Rec;
    if (!(Number(a?.responseCode) >= 0)) throw new Error(`${what} was not processed: ${JSON.stringify(a)}`);
    return a as T;
  };
  const auth = async (amount = '50.00') =>
    ok<{ transactionID: string }>(await client.processAuth(purchaseBody(amount) as never), 'processAuth');
  const purchase = async () =>
    ok<{ transactionID: string }>(await client.processCard(purchaseBody() as never), 'processCard');
  const token = async () =>
    ok<{ accessToken: string }>(
      await client.getAccessToken({ transactionAmount: '10.00', transactionCurrency: 'AUD' }),
      'getAccessToken',
    ).accessToken;
  const storedCard = async () =>
    ok<{ cardID: string; cardKey: string }>(
      await client.token.addCard({
        cardName: 'Jane Citizen',
        cardNumber: '4564710000000004',
        cardExpiryMonth: '02',
        cardExpiryYear: '29',
      }),
      'addCard',
    );
  const session = async () => {
    const accessToken = await token();
    const enrolment = ok<{ threeDSToken: string }>(
      await client.checkEnrollment({
        accessToken,
        transactionAmount: '10.00',
        transactionCurrency: 'AUD',
        returnURL: 'https://merchant.test/3ds',
        ...cardData,
      } as never),
      'checkEnrollment',
    );
    return { accessToken, threeDSToken: enrolment.threeDSToken };
  };
  const debitAuthorisation = async () =>
    ok<{ fingerprint: string }>(
      await client.processDDebitAuth(example('processDDebitAuth') as never),
      'processDDebitAuth',
    ).fingerprint;
  const debit = async () =>
    ok<{ transactionID: string }>(
      await client.processDDebit({
        ...example('processDDebit'),
        fingerprint: await debitAuthorisation(),
        transactionReferenceID: fresh('DD'),
      } as never),
      'processDDebit',
    );
  const batch = async () =>
    ok<{ batchUUID: string }>(
      await client.processBatch({ ...example('processBatch'), batchNotifyURL: 'https://merchant.test/batch' } as never),
      'processBatch',
    ).batchUUID;
  const merchantRequest = async () =>
    ok<{ requestReference: string }>(await client.partner.addMerchant(example('addMerchant') as never), 'addMerchant')
      .requestReference;
  const agreement = async () =>
    ok<{ result: { agreementIdentification: string } }>(
      await client.payto.createAgreement(example('createAgreement') as never),
      'createAgreement',
    ).result.agreementIdentification;
  const payToPayment = async () => {
    const agreementIdentification = await agreement();
    const made = ok<{ result: { transaction: { id: string } } }>(
      await client.payto.createPayment(agreementIdentification, {
        ...example('createPayToPayment'),
        transaction: { reference: fresh('PT'), amount: 10, lastPayment: false },
      } as never),
      'createPayToPayment',
    );
    return { agreementIdentification, transactionId: made.result.transaction.id };
  };
  const payId = async () => {
    const id = `${fresh('jane').toLowerCase()}@merchant.payid.test`;
    ok(await client.payid.create({ payId: id, name: 'Jane Citizen', reference: fresh('CUST') }), 'createPayId');
    return id;
  };
  const payout = async (complete = false) => {
    const reference = fresh('PO');
    const made = ok<{ result: { payoutId: string; transactions: { transactionId: string }[] } }>(
      await client.payouts.create({
        reference,
        notifyURL: 'https://merchant.test/payouts',
        transactions: [
          {
            payee: { name: 'Sam Payee', contact: { email: 'sam@payee.test' } },
            transaction: {
              reference: `${reference}-1`,
              product: 'Refund',
              amount: 12.5,
              bsb: '802950',
              accNumber: '123321',
            },
          },
        ],
      } as never),
      'createPayouts',
    );
    if (complete) await control.completePayout(made.result.payoutId);
    return { payoutId: made.result.payoutId, transactionId: made.result.transactions[0]!.transactionId };
  };

  const body = (id: OperationId, extra: Rec = {}) => ({ body: { ...example(id), ...extra } });
  // The operations that need state made first; any other (a method added since) is sent its own first example.
  const made: Partial<Record<OperationId, Subject>> = {
    processCard: async () => body('processCard', { transactionReferenceID: fresh('PC') }),
    processAuth: async () => body('processAuth', { transactionReferenceID: fresh('PA') }),
    processCapture: async () =>
      body('processCapture', {
        transactionID: (await auth()).transactionID,
        captureAmount: '5.00',
        transactionReferenceID: fresh('CAP'),
      }),
    refundCard: async () =>
      body('refundCard', {
        transactionID: (await purchase()).transactionID,
        refundAmount: '1.00',
        transactionAmount: '1.00',
      }),
    processVoid: async () => body('processVoid', { transactionID: (await auth()).transactionID }),
    queryCard: async () => body('queryCard', { transactionID: (await purchase()).transactionID }),
    verifyCard: async () => body('verifyCard'),
    getAccessToken: async () => body('getAccessToken'),
    checkEnrollment: async () => body('checkEnrollment', { accessToken: await token() }),
    checkTDSAuth: async () => {
      const { cardID: _, ...rest } = example('checkTDSAuth');
      return { body: { ...rest, ...(await session()), ...cardData } };
    },
    checkPARes: async () => body('checkPARes', await session()),
    processDDebitAuth: async () => body('processDDebitAuth'),
    processDDebit: async () =>
      body('processDDebit', { fingerprint: await debitAuthorisation(), transactionReferenceID: fresh('DD') }),
    queryDD: async () => body('queryDD', { transactionID: (await debit()).transactionID }),
    addBlacklistedCard: async () => {
      // Each call blacklists the stolen test card anew: its entry is taken out first.
      const listed = (await client.queryBlacklistedCard({
        cardNumber: '5163200000000016',
        cardExpiryMonth: '12',
        cardExpiryYear: '29',
      })) as Rec;
      if (listed.cardID) await client.removeBlacklistedCard({ cardID: listed.cardID });
      return body('addBlacklistedCard');
    },
    removeBlacklistedCard: async () => {
      const listed = (await client.queryBlacklistedCard({
        cardNumber: '5163200000000016',
        cardExpiryMonth: '12',
        cardExpiryYear: '29',
      })) as Rec;
      const entry = listed.cardID
        ? listed
        : ok<Rec>(await client.addBlacklistedCard(example('addBlacklistedCard') as never), 'addBlacklistedCard');
      return body('removeBlacklistedCard', { cardID: entry.cardID });
    },
    queryBlacklistedCard: async () => body('queryBlacklistedCard'),
    getSettlement: async () => body('getSettlement'),
    getSurcharge: async () => body('getSurcharge', { accessToken: await token() }),
    queryBIN: async () => body('queryBIN'),
    processBatch: async () => body('processBatch', { batchNotifyURL: 'https://merchant.test/batch' }),
    retrieveBatch: async () => body('retrieveBatch', { batchUUID: await batch() }),
    simulateNotify: async () => body('simulateNotify', { transactionID: (await debit()).transactionID }),
    tokenProcessCard: async () => {
      const { cardKey: _k, cardKeyReplace: _r, ...rest } = example('tokenProcessCard');
      return { body: { ...rest, cardID: (await storedCard()).cardID, transactionReferenceID: fresh('TPC') } };
    },
    tokenProcessAuth: async () => {
      const { cardKey: _k, cardKeyReplace: _r, ...rest } = example('tokenProcessAuth');
      return { body: { ...rest, cardID: (await storedCard()).cardID } };
    },
    cardInfo: async () => body('cardInfo', await storedCard()),
    addCard: async () => body('addCard'),
    removeCard: async () => body('removeCard', await storedCard()),
    changeExpiry: async () => body('changeExpiry', await storedCard()),
    addMerchant: async () => body('addMerchant'),
    updateMerchant: async () => {
      const created = ok<{ merchantUUID: string }>(
        await client.partner.checkMerchant({ requestReference: await merchantRequest() }),
        'checkMerchant',
      );
      return body('updateMerchant', { merchantUUID: created.merchantUUID });
    },
    checkMerchant: async () => body('checkMerchant', { requestReference: await merchantRequest() }),
    walletProcessCard: async () => body('walletProcessCard', { transactionReferenceID: fresh('W') }),
    payframeProcessCard: async () => body('payframeProcessCard', { transactionReferenceID: fresh('PF') }),
    payframeProcessAuth: async () => body('payframeProcessAuth'),
    retrieveBatchResponse: async () => ({ params: { batchUUID: await batch() } }),
    retrieveBatchNotify: async () => ({ params: { batchUUID: await batch() } }),
    createAgreement: async () => body('createAgreement'),
    amendAgreement: async () => ({ ...body('amendAgreement'), params: { agreementIdentification: await agreement() } }),
    createPayToPayment: async () => ({
      body: {
        ...example('createPayToPayment'),
        transaction: { reference: fresh('PT'), amount: 10, lastPayment: false },
      },
      params: { agreementIdentification: await agreement() },
    }),
    getPayToPayment: async () => ({ params: await payToPayment() }),
    getPayToPaymentStatus: async () => ({ params: await payToPayment() }),
    searchPayToPayments: async () => ({ query: { status: 'approved' } }),
    listPayIds: async () => ({}),
    createPayId: async () => ({
      body: {
        payId: `${fresh('new').toLowerCase()}@merchant.payid.test`,
        name: 'Jane Citizen',
        reference: fresh('CUST'),
      },
    }),
    getPayId: async () => ({ params: { payId: await payId() } }),
    updatePayId: async () => ({ ...body('updatePayId'), params: { payId: await payId() } }),
    updatePayIdStatus: async () => ({ ...body('updatePayIdStatus'), params: { payId: await payId() } }),
    listPayIdTransactions: async () => ({ ...body('listPayIdTransactions'), params: { payId: await payId() } }),
    refundPayIdTransaction: async () => {
      const id = await payId();
      const listed = ok<{ result: { transactions: { transactionId?: string; id?: string }[] } }>(
        await client.payid.listTransactions(id, {}),
        'listPayIdTransactions',
      );
      const first = listed.result.transactions[0]! as Rec;
      return {
        body: { amount: 1, reason: 'Returned goods' },
        params: { transactionId: first.transactionId ?? first.id },
      };
    },
    createPayouts: async () => {
      const reference = fresh('PO');
      const b = example('createPayouts');
      b.reference = reference;
      b.transactions[0].transaction.reference = `${reference}-1`;
      return { body: b };
    },
    getPayoutStatus: async () => ({ params: { payoutId: (await payout()).payoutId } }),
    resendPayoutNotifications: async () => ({ params: { payoutId: (await payout(true)).payoutId } }),
    getPayoutTransactionStatus: async () => ({ params: await payout() }),
    getPayoutTransactionStatusAlias: async () => ({ params: await payout() }),
    getPayoutTransactionNotify: async () => ({ params: await payout(true) }),
  };
  return Object.fromEntries(
    operations.map((o) => [o.operationId, made[o.operationId] ?? (async () => body(o.operationId))]),
  ) as Record<OperationId, Subject>;
}

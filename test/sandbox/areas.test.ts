// The sandbox's other areas, through the typed client: access tokens and 3D Secure, surcharges,
// settlement files, direct debit on the sandbox clock, batches, partners, PayTo, PayID, payouts,
// notifications (signed as the spec's webhooks say), and a restart that keeps everything committed.
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { unzipSync, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayClient } from '../../generated/client.ts';
import { hashRecipes } from '../../generated/hash-recipes.ts';
import { canonicalJson, computeHash } from '../../runtime/signing.ts';
import { parseCsv, readSettlement } from '../../runtime/settlement.ts';
import { accessTokenLifetimeMinutes } from '../../generated/spec-constants.ts';
import { createSandbox } from '../../sandbox/index.ts';
import { MIGRATIONS } from '../../sandbox/store.ts';
import { RAIL_MS } from '../../sandbox/payout-attempts.ts';
import { card, counts, customer, startSandbox, type TestSandbox } from './support.ts';
import { validatorFor } from '../support/contract.ts';
import { bankDebit, widgetsMerchant } from '../support/requests.ts';

let t: TestSandbox;
beforeAll(async () => {
  t = await startSandbox();
});
afterAll(() => t.close());

const passphrase = () => t.sandbox.seed.passphrase;
const signature = (body: unknown) => createHmac('sha256', passphrase()).update(canonicalJson(body)).digest('hex');

describe('access tokens, 3D Secure and surcharges', () => {
  it('issues an access token that works for the lifetime the contract gives it (30 minutes) of sandbox time', async () => {
    const minutes = accessTokenLifetimeMinutes;
    expect(minutes).toBe(30);
    const issued = (await t.client.getAccessToken({ transactionAmount: '100.00', transactionCurrency: 'AUD' })) as {
      accessToken: string;
    };
    const quote = () =>
      t.client.getSurcharge({
        accessToken: issued.accessToken,
        transactionAmount: '100.00',
        transactionCurrency: 'AUD',
        paymentCardNumber: '4564710000000004',
      });
    expect(await quote()).toEqual({
      responseCode: '0',
      responseMessage: 'Operation successful',
      transactionAmount: '100.00',
      surchargeAmount: '1.10',
      totalAmount: '101.10',
    });
    t.sandbox.clock.advance((minutes - 1) * 60_000);
    expect((await quote()).responseCode).toBe('0');
    t.sandbox.clock.advance(2 * 60_000);
    expect((await quote()).responseCode).toBe('-1');
  });

  it('rounds surcharges half up, per scheme', async () => {
    const { accessToken } = (await t.client.getAccessToken({
      transactionAmount: '10.05',
      transactionCurrency: 'AUD',
    })) as { accessToken: string };
    // amex 2.50 % of 10.05 = 0.25125 → 0.25; of 10.10 = 0.2525 → 0.25; of 10.20 = 0.255 → 0.26
    const q = (amount: string) =>
      t.client.getSurcharge({
        accessToken,
        transactionAmount: amount,
        transactionCurrency: 'AUD',
        paymentCardNumber: '376000000000006',
      });
    expect((await q('10.05')) as object).toMatchObject({ surchargeAmount: '0.25' });
    expect((await q('10.20')) as object).toMatchObject({ surchargeAmount: '0.26', totalAmount: '10.46' });
  });

  it('runs the 3DS 2.0 flow to a purchase with a stored card', async () => {
    const { accessToken } = (await t.client.getAccessToken({
      transactionAmount: '25.00',
      transactionCurrency: 'AUD',
    })) as { accessToken: string };
    const { cardID } = (await t.client.token.addCard({
      cardName: 'Jane',
      cardNumber: '4564710000000004',
      cardExpiryMonth: '02',
      cardExpiryYear: '29',
    })) as { cardID: string };
    const enrolment = (await t.client.checkEnrollment({
      accessToken,
      transactionAmount: '25.00',
      transactionCurrency: 'AUD',
      cardID,
    })) as { enrolled: string; threeDSToken: string };
    expect(enrolment.enrolled).toBe('Y');
    const auth = (await t.client.checkTDSAuth({ accessToken, threeDSToken: enrolment.threeDSToken, cardID })) as Record<
      string,
      string
    >;
    expect(auth).toMatchObject({ threeDSStatus: 'Y', threeDSEci: '05' });
    const paid = await t.client.processCard({
      accessToken,
      transactionAmount: '25.00',
      transactionCurrency: 'AUD',
      transactionProduct: '3DS',
      cardID,
      threeDSEci: auth.threeDSEci!,
      threeDSCavv: auth.threeDSCavv!,
      threeDSStatus: 'Y',
      threeDSV2Version: '2.2.0',
    } as never);
    expect(paid.responseCode).toBe('0');
    const refused = await t.client.processCard({
      accessToken,
      transactionAmount: '25.00',
      transactionCurrency: 'AUD',
      transactionProduct: '3DS',
      cardID,
      threeDSEci: '07',
      threeDSCavv: 'x',
      threeDSStatus: 'N',
      threeDSV2Version: '2.2.0',
    } as never);
    expect(refused.responseCode).toBe('2');
  });

  it('gives a 3DS outcome only for a session checkEnrollment opened for this merchant, with an enrolled card', async () => {
    const { accessToken } = (await t.client.getAccessToken({
      transactionAmount: '9.00',
      transactionCurrency: 'AUD',
    })) as { accessToken: string };
    const amex = { paymentCardNumber: '376000000000006', paymentCardExpiry: '0229', paymentCardName: 'Jane Citizen' };
    const before = await counts(t.sandbox);
    const threeDSToken = 'tds0000000000000000';
    for (const unknown of [
      await t.client.checkTDSAuth({ accessToken, threeDSToken, ...amex } as never),
      await t.client.checkPARes({ accessToken, threeDSToken, paRes: 'eJzVWFmTo7gS' } as never),
    ]) {
      expect(unknown).toEqual({
        responseCode: '-2',
        responseMessage:
          "Field 'threeDSToken' is invalid: no 3D Secure session of this merchant has it (checkEnrollment opens one)",
      });
    }
    expect(await counts(t.sandbox)).toEqual(before);
    const notEnrolled = (await t.client.checkEnrollment({
      accessToken,
      transactionAmount: '9.00',
      transactionCurrency: 'AUD',
      ...amex,
    } as never)) as { enrolled: string; threeDSToken: string };
    expect(notEnrolled.enrolled).toBe('N');
    const refused = await t.client.checkTDSAuth({
      accessToken,
      threeDSToken: notEnrolled.threeDSToken,
      ...amex,
    } as never);
    expect(refused).toEqual({
      responseCode: '-2',
      responseMessage:
        "Field 'threeDSToken' is invalid: its card is not enrolled in 3D Secure (checkEnrollment answered enrolled N)",
    });
    const visa = (await t.client.checkEnrollment({
      accessToken,
      transactionAmount: '9.00',
      transactionCurrency: 'AUD',
      ...amex,
      paymentCardNumber: card.visa.paymentCardNumber,
    } as never)) as { enrolled: string; threeDSToken: string };
    expect(visa.enrolled).toBe('Y');
    expect(
      await t.client.checkPARes({ accessToken, threeDSToken: visa.threeDSToken, paRes: 'eJzVWFmTo7gS' } as never),
    ).toMatchObject({ responseCode: '0', threeDSStatus: 'A', threeDSEci: '06' });
  });
});

/** On a weekend a purchase settles on Monday: the file lists it once the sandbox clock reaches that day. */
const settledBy = (day: string) => {
  while (t.sandbox.clock.settlementToday() < day) t.sandbox.clock.advanceDays(1);
};

describe('settlement', () => {
  it('answers a zip holding a CSV of what settled between the dates, in the version asked', async () => {
    const paid = (await t.client.processCard({
      transactionAmount: '12.34',
      transactionCurrency: 'AUD',
      transactionProduct: 'Settled tea',
      transactionReferenceID: 'SETTLE-1',
      ...customer,
      ...card.visa,
    } as never)) as { transactionID: string; authSettledDate: string };
    const day = paid.authSettledDate;
    settledBy(day);
    const zip = (await t.client.getSettlement({
      settlementFrom: day,
      settlementTo: day,
      version: '1.6',
    })) as Uint8Array;
    const file = readSettlement(zip);
    expect(file.name).toBe('settlement.csv');
    expect(file.rows.find((r) => r.transactionID === paid.transactionID)).toMatchObject({
      transactionReferenceID: 'SETTLE-1',
      status: 'approved',
      transactionAmount: '12.34',
      paymentCardNumber: '456471XXXXXX0004',
      transactionProduct: 'Settled tea',
    });
    const older = readSettlement(
      (await t.client.getSettlement({ settlementFrom: day, settlementTo: day, version: '1.5' })) as Uint8Array,
    );
    expect(older.columns).toEqual([
      'transactionID',
      'status',
      'transactionAmount',
      'transactionCurrency',
      'settlementDate',
      'transactionProduct',
    ]);
    const before = readSettlement(
      (await t.client.getSettlement({ settlementFrom: '2000-01-01', settlementTo: '2000-01-02' })) as Uint8Array,
    );
    expect(before.rows).toEqual([]);
  });

  it("without version, the layout the vendor's Magento module reads by position: 0 transaction ID, 1 status, 4 product", async () => {
    const sale = (product: string) =>
      t.client.processCard({
        transactionAmount: '3.00',
        transactionCurrency: 'AUD',
        transactionProduct: product,
        ...customer,
        ...card.visa,
      } as never) as Promise<{ transactionID: string; authSettledDate: string }>;
    const kept = await sale('Kept');
    const voided = await sale('Voided');
    expect((await t.client.processVoid({ transactionID: voided.transactionID })).responseCode).toBe('0');
    const day = kept.authSettledDate;
    settledBy(day);
    const zip = (await t.client.getSettlement({ settlementFrom: day, settlementTo: day })) as Uint8Array;
    const csv = parseCsv(new TextDecoder().decode(Object.values(unzipSync(zip))[0]!));
    // GetSettlementData::mapTransactions: $row[0] id, $row[1] status, $row[4] product.
    const byId = new Map(csv.slice(1).map((row) => [row[0], row]));
    expect([byId.get(kept.transactionID)![1], byId.get(kept.transactionID)![4]]).toEqual(['approved', 'Kept']);
    expect([byId.get(voided.transactionID)![1], byId.get(voided.transactionID)![4]]).toEqual(['void', 'Voided']);
  });
});

describe('direct debit', () => {
  it('records an authorisation, notifies with the return hash, and settles debits on the sandbox clock', async () => {
    t.posted.length = 0;
    const auth = (await t.client.processDDebitAuth({
      customerName: 'Jane',
      paymentAccountBSB: '802950',
      paymentAccountName: 'Jane',
      paymentAccountNumber: '123321',
      transactionAmount: '20.00',
      transactionCurrency: 'AUD',
      returnURL: 'https://m.test/return',
      notifyURL: 'https://m.test/notify',
      hashSalt: 'pepper',
    })) as { fingerprint: string };
    expect(auth.fingerprint).toMatch(/^[0-9a-f]{32}$/);
    await t.sandbox.notifier.deliverDue();
    const note = t.posted.find((p) => p.url === 'https://m.test/notify')!;
    expect(validatorFor('#/components/schemas/DirectDebitOutcomeNotification')(note.body)).toBe(true);
    expect(note.body.hash).toBe(computeHash(hashRecipes.return, passphrase(), { ...note.body, hashSalt: 'pepper' }));
    const debit = (await t.client.processDDebit({
      fingerprint: auth.fingerprint,
      transactionAmount: '20.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'Plan',
      customerName: 'Jane',
    })) as { transactionID: string; responseCode: string };
    expect(debit.responseCode).toBe('10');
    expect((await t.client.queryDD({ transactionID: debit.transactionID })).responseCode).toBe('10');
    t.sandbox.clock.advanceDays(2);
    expect(await t.client.queryDD({ transactionID: debit.transactionID })).toMatchObject({
      responseCode: '0',
      responseMessage: 'Transaction approved',
    });
  });
});

describe('batches', () => {
  it('runs a zipped CSV of stored-card purchases and reports each line as CSV, JSON and a notification', async () => {
    const { cardID, cardKey } = (await t.client.token.addCard({
      cardName: 'Batch',
      cardNumber: '4564710000000004',
      cardExpiryMonth: '02',
      cardExpiryYear: '29',
    })) as { cardID: string; cardKey: string };
    const csv = `transactionReferenceID,transactionAmount,transactionCurrency,transactionProduct,cardID,cardKey\nB-1,5.00,AUD,Box,${cardID},${cardKey}\nB-2,6.00,AUD,Box,${cardID},WrongKey00000000\nB-3,7.00,AUD,Box,KOCI10023982,${cardKey}\n`;
    const batchFile = Buffer.from(zipSync({ 'batch.csv': new TextEncoder().encode(csv) })).toString('base64');
    t.posted.length = 0;
    const accepted = (await t.client.processBatch({ batchFile, batchNotifyURL: 'https://m.test/batch' })) as {
      batchUUID: string;
    };
    expect(accepted.batchUUID).toMatch(/^[0-9a-f]{12,32}$/);
    const json = (await t.client.retrieveBatchResponse(accepted.batchUUID)) as {
      transactions: { transactionReferenceID: string; responseCode: string; responseMessage: string }[];
    };
    // A wrong key is a key that does not match; a card the vault does not hold is no such card, as /token says.
    expect(json.transactions.map((l) => [l.transactionReferenceID, l.responseCode, l.responseMessage])).toEqual([
      ['B-1', '0', 'Transaction approved'],
      ['B-2', '-2', "Field 'cardKey' is invalid: does not match the stored card"],
      ['B-3', '-2', "Field 'cardID' is invalid: no such card"],
    ]);
    expect(await t.client.retrieveBatch({ batchUUID: accepted.batchUUID })).toMatch(
      /^transactionReferenceID,transactionID,transactionAmount,responseCode,responseMessage\nB-1,1336-/,
    );
    await t.sandbox.notifier.deliverDue();
    const note = t.posted.find((p) => p.url === 'https://m.test/batch')!;
    expect(note.headers['SVC-MESSAGEHASH']).toBe(signature(note.body));
    expect(validatorFor('#/components/schemas/BatchNotification')(note.body)).toBe(true);
    expect(
      (await t.client.processBatch({ batchFile: Buffer.from('not a zip').toString('base64') })).responseMessage,
    ).toBe("Field 'batchFile' is invalid: must be a base64 zip holding one CSV file");
  });
});

describe('partners', () => {
  it('creates a merchant that can transact, notifies the partner, and updates it', async () => {
    t.posted.length = 0;
    const created = (await t.client.partner.addMerchant(widgetsMerchant)) as {
      responseCode: number;
      requestReference: string;
    };
    expect(created.responseCode).toBe(0);
    const state = (await t.client.partner.checkMerchant({ requestReference: created.requestReference })) as {
      status: string;
      merchantUUID: string;
    };
    expect(state.status).toBe('approved');
    await t.sandbox.notifier.deliverDue();
    const note = t.posted.find((p) => p.url === 'https://partner.test/notify')!;
    expect(note.body).toMatchObject({
      event: 'merchantCreated',
      requestReference: created.requestReference,
      merchantUUID: state.merchantUUID,
    });
    expect(note.headers['SVC-MESSAGEHASH']).toBe(signature(note.body));
    const s = t.sandbox.seed;
    const merchant = createGatewayClient({
      baseUrl: t.base,
      merchantUUID: state.merchantUUID,
      apiKey: s.apiKey,
      passphrase: s.passphrase,
    });
    expect(
      (
        await merchant.processCard({
          transactionAmount: '1.00',
          transactionCurrency: 'AUD',
          transactionProduct: 'First',
          ...customer,
          ...card.visa,
        } as never)
      ).responseCode,
    ).toBe('0');
    expect(
      await t.client.partner.updateMerchant({ merchantUUID: state.merchantUUID, settlementAccountNumber: '11111111' }),
    ).toEqual({ responseCode: 0, responseMessage: 'Operation successful', merchantUUID: state.merchantUUID });
    expect((await t.client.partner.updateMerchant({ merchantUUID: 'deadbeef00000' })).responseCode).toBe('-2');
  });
});

describe('PayTo', () => {
  it('takes payments under an active agreement, up to its maximum, and reports their state', async () => {
    const created = (await t.client.payto.createAgreement({
      payer: { name: 'Jane', account: { name: 'Jane', bsb: '802950', accountNumber: '123321' } },
      agreement: { payment: { type: 'BALN', frequency: 'ADHO', maximum: 100 } },
    })) as { result: { agreementIdentification: string; status: string } };
    const id = created.result.agreementIdentification;
    expect(created.result.status).toBe('active');
    const paid = (await t.client.payto.createPayment(id, {
      payer: { name: 'Jane' },
      transaction: { reference: 'PT-1', amount: 25.5 },
    })) as { responseCode: number; result: { transaction: { id: string; status: string } } };
    expect(paid.responseCode).toBe(0);
    expect(paid.result.transaction.status).toBe('approved');
    expect(await t.client.payto.getPaymentStatus(id, paid.result.transaction.id)).toEqual({
      responseCode: 0,
      responseMessage: 'Operation successful',
      result: { status: 'approved' },
    });
    expect((await t.client.payto.getPayment(id, paid.result.transaction.id)) as object).toMatchObject({
      result: { reference: 'PT-1', amount: 25.5, agreementIdentification: id },
    });
    const before = await counts(t.sandbox);
    expect(
      await t.client.payto.createPayment(id, {
        payer: { name: 'Jane' },
        transaction: { reference: 'PT-2', amount: 100.01 },
      }),
    ).toEqual({
      responseCode: -2,
      responseMessage: "Field 'transaction.amount' is invalid: above the agreement's maximum of 100",
    });
    expect(await counts(t.sandbox)).toEqual(before);
    expect(
      (await t.client.payto.amendAgreement(id, { agreement: { payment: { maximum: 200 } } })) as object,
    ).toMatchObject({ result: { agreement: { payment: { type: 'BALN', maximum: 200 } } } });
    expect(
      ((await t.client.payto.searchPayments({ agreementIdentification: id })) as { result: { payments: unknown[] } })
        .result.payments,
    ).toHaveLength(1);
  });
});

describe('PayID', () => {
  it('answers Get PayID with 201, lists, refunds up to the payment, and disables', async () => {
    expect((await t.client.payid.create({ payId: 'jane-9@merchant.payid.test', name: 'Jane' })).responseCode).toBe(0);
    const got = await fetch(`${t.base}/npp/payid/${encodeURIComponent('jane-9@merchant.payid.test')}`, {
      headers: {
        'SVC-API-VERSION': '2.0',
        'SVC-MERCHANTID': t.sandbox.seed.merchantUUID,
        'SVC-APIKEY': t.sandbox.seed.apiKey,
        'SVC-MESSAGEHASH': computeHash(hashRecipes.message, passphrase(), { payId: 'jane-9@merchant.payid.test' }),
      },
    });
    expect(got.status).toBe(201);
    expect(await got.json()).toEqual({
      responseCode: 0,
      responseMessage: 'Operation successful',
      result: { name: 'Jane', payId: 'jane-9@merchant.payid.test', status: 'Enabled' },
    });
    const received = (await t.client.payid.listTransactions('jane-9@merchant.payid.test', {})) as {
      result: { transactions: { transactionId: string; amount: number }[] };
    };
    const payment = received.result.transactions[0]!;
    expect(
      (
        (await t.client.payid.refundTransaction(payment.transactionId, { amount: 40 })) as {
          result: { transaction: { status: string } };
        }
      ).result.transaction.status,
    ).toBe('partiallyRefunded');
    expect((await t.client.payid.refundTransaction(payment.transactionId, { amount: 2.01 })).responseCode).toBe(-2);
    expect(
      (
        (await t.client.payid.updateStatus('jane-9@merchant.payid.test', { status: 'Disabled' })) as {
          result: { status: string };
        }
      ).result.status,
    ).toBe('Disabled');
    expect((await t.client.payid.create({ payId: 'jane-9@merchant.payid.test', name: 'Again' })).responseMessage).toBe(
      "Field 'payId' is invalid: already registered",
    );
  });

  it('30 refunds of 5.00 at once against a 42.00 payment: 8 approved, the rest refused, 40.00 refunded', async () => {
    await t.client.payid.create({ payId: 'race-1@merchant.payid.test', name: 'Race' });
    const received = (await t.client.payid.listTransactions('race-1@merchant.payid.test', {})) as {
      result: { transactions: { transactionId: string }[] };
    };
    const id = received.result.transactions[0]!.transactionId;
    const refunds = await Promise.all(
      Array.from({ length: 30 }, () => t.client.payid.refundTransaction(id, { amount: 5 })),
    );
    expect(refunds.filter((r) => r.responseCode === 0)).toHaveLength(8);
    expect(refunds.filter((r) => r.responseCode === -2)).toHaveLength(22);
    expect((await t.sandbox.store.get('SELECT refunded FROM payid_transactions WHERE id = ?', id))!.refunded).toBe(
      4000,
    );
  });
});

describe('payouts', () => {
  it("goes through the sandbox accounts' attempts as the clock moves and notifies each transaction once it ends, signed", async () => {
    t.posted.length = 0;
    const created = (await t.client.payouts.create({
      reference: 'PO-9',
      notifyURL: 'https://m.test/payouts',
      transactions: ['123321', '11111111', '13131313'].map((acc, i) => ({
        payee: { name: `Payee ${i}` },
        transaction: { reference: `PO-9-${i}`, amount: 10 + i, bsb: '802950', accNumber: acc },
      })),
    })) as { result: { payoutId: string; transactions: { transactionId: string; status: string }[] } };
    // Every NPP attempt pending at first: nothing is notified yet.
    expect(created.result).toMatchObject({ status: 'pending' });
    expect(created.result.transactions.map((x) => x.status)).toEqual(['pending', 'pending', 'pending']);
    const second = async () =>
      (
        (await t.client.payouts.getTransactionStatus('PO-9', 'PO-9-1')) as {
          result: { payouts: { type: string; status: string }[] };
        }
      ).result.payouts.map((p) => [p.type, p.status]);
    expect(await second()).toEqual([['NPP', 'pending']]);
    await t.sandbox.notifier.deliverDue();
    expect(t.posted.filter((p) => p.url === 'https://m.test/payouts')).toHaveLength(0);
    // NPP answers within seconds; the DE attempt that follows a decline takes the next day's run.
    t.sandbox.clock.advance(RAIL_MS.NPP);
    expect(await second()).toEqual([
      ['NPP', 'declined'],
      ['DE', 'pending'],
    ]);
    await t.sandbox.notifier.deliverDue();
    expect(t.posted.filter((p) => p.url === 'https://m.test/payouts')).toHaveLength(1);
    t.sandbox.clock.advanceDays(1);
    expect(await second()).toEqual([
      ['NPP', 'declined'],
      ['DE', 'approved'],
    ]);
    expect(
      ((await t.client.payouts.getStatus('PO-9')) as { result: { status: string; transactions: { status: string }[] } })
        .result,
    ).toMatchObject({
      status: 'completed',
      transactions: [{ status: 'approved' }, { status: 'approved' }, { status: 'returned' }],
    });
    await t.sandbox.notifier.deliverDue();
    const notes = t.posted.filter((p) => p.url === 'https://m.test/payouts');
    expect(notes).toHaveLength(3);
    for (const n of notes) {
      expect(n.headers['SVC-MESSAGEHASH']).toBe(signature(n.body));
      expect(validatorFor('#/components/schemas/PayoutTransactionNotification')(n.body)).toBe(true);
    }
    expect(
      (await t.client.payouts.getTransactionNotify(
        created.result.payoutId,
        created.result.transactions[0]!.transactionId,
      )) as object,
    ).toMatchObject({ result: { delivered: true, attempts: 1 } });
    const before = await counts(t.sandbox);
    expect(
      (
        await t.client.payouts.create({
          reference: 'PO-X',
          transactions: [
            { payee: { name: 'X' }, transaction: { reference: 'X', amount: 1, bsb: '111111', accNumber: '123321' } },
          ],
        })
      ).responseMessage,
    ).toBe("Field 'transactions[0].transaction.bsb' is invalid: no such BSB");
    expect(await counts(t.sandbox)).toEqual(before);
  });

  it('retries an undelivered notification with backoff on the sandbox clock', async () => {
    const failing = await startSandbox({ fetch: (async () => new Response(null, { status: 503 })) as typeof fetch });
    try {
      await failing.client.payouts.create({
        reference: 'R',
        notifyURL: 'https://down.test/',
        transactions: [
          { payee: { name: 'P' }, transaction: { reference: 'R-1', amount: 1, bsb: '802950', accNumber: '123321' } },
        ],
      });
      failing.sandbox.clock.advance(RAIL_MS.NPP); // the NPP attempt ends: its notification falls due
      await failing.sandbox.notifier.deliverDue();
      expect(await failing.sandbox.notifier.deliverDue()).toBe(0);
      expect((await failing.sandbox.notifier.all())[0]).toMatchObject({ attempts: 1, delivered: 0, last_status: 503 });
      failing.sandbox.clock.advance(61_000);
      await failing.sandbox.notifier.deliverDue();
      expect((await failing.sandbox.notifier.all())[0]).toMatchObject({ attempts: 2 });
    } finally {
      await failing.close();
    }
  });
});

describe('simulateNotify', () => {
  it('sends a notification now for a subject that exists, and refuses one that does not', async () => {
    const debit = (await t.client.processDDebit(bankDebit('5.00', { transactionProduct: 'x' }))) as {
      transactionID: string;
    };
    t.posted.length = 0;
    expect(
      (
        await t.client.simulateNotify({
          event: 'directDebitOutcome',
          notifyURL: 'https://m.test/sim',
          transactionID: debit.transactionID,
        })
      ).responseCode,
    ).toBe('0');
    await t.sandbox.notifier.deliverDue();
    expect(t.posted.find((p) => p.url === 'https://m.test/sim')!.body).toMatchObject({
      event: 'directDebitOutcome',
      transactionID: debit.transactionID,
    });
    expect(
      (
        await t.client.simulateNotify({
          event: 'batchNotify',
          notifyURL: 'https://m.test/sim',
          transactionID: 'abcdef0123456',
        })
      ).responseCode,
    ).toBe('-2');
  });
});

describe('the store', () => {
  it('keeps what was committed across a restart, vault key included', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-sandbox-'));
    try {
      const first = await startSandbox({ dbPath: path.join(dir, 'sandbox.db') });
      const added = (await first.client.token.addCard({
        cardName: 'Kept',
        cardNumber: '4564710000000004',
        cardExpiryMonth: '02',
        cardExpiryYear: '29',
      })) as { cardID: string; cardKey: string };
      await first.close();
      const second = await startSandbox({ dbPath: path.join(dir, 'sandbox.db') });
      expect(await second.sandbox.store.schemaVersion).toBe(MIGRATIONS.length);
      expect((await second.client.token.cardInfo({ cardID: added.cardID, cardKey: added.cardKey })).responseCode).toBe(
        '0',
      );
      expect(
        (
          await second.client.token.processCard({
            cardID: added.cardID,
            cardKey: added.cardKey,
            cardKeyReplace: 'AfterRestart0001',
            transactionAmount: '2.00',
            transactionCurrency: 'AUD',
            transactionProduct: 'x',
          })
        ).responseCode,
      ).toBe('0');
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('seeds its merchant and partner from the environment', async () => {
    const s = await createSandbox({
      dbPath: ':memory:',
      env: {
        PGW_SANDBOX_MERCHANT_UUID: 'abc1234567890',
        PGW_SANDBOX_API_KEY: 'key12345',
        PGW_SANDBOX_PASSPHRASE: 'pp',
        PGW_SANDBOX_PARTNER_UUID: 'def1234567890',
      },
    });
    expect(await s.store.get("SELECT id, api_key, passphrase FROM accounts WHERE kind = 'merchant'")).toMatchObject({
      id: 'abc1234567890',
      api_key: 'key12345',
      passphrase: 'pp',
    });
    expect(await s.store.get("SELECT id FROM accounts WHERE kind = 'partner'")).toMatchObject({ id: 'def1234567890' });
    await s.close();
  });
});

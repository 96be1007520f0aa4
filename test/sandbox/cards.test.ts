// The sandbox's card payments and vault, through the typed client: outcomes of the test cards,
// authorise → capture → refund → void, the vault's rotating key (and 50 purchases racing for one key),
// refusals that store nothing, and card numbers that never come back unmasked.
import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApproved } from '../../generated/client.ts';
import { findCardNumber } from '../../runtime/card-numbers.ts';
import { card, counts, customer, startSandbox, type TestSandbox } from './support.ts';

let t: TestSandbox;
beforeAll(async () => {
  t = await startSandbox();
});
afterAll(() => t.close());

const purchase = (extra: Record<string, unknown> = {}) =>
  t.client.processCard({
    transactionAmount: '10.00',
    transactionCurrency: 'AUD',
    transactionProduct: 'Tea',
    ...customer,
    ...card.visa,
    ...extra,
  } as never);

describe('card purchases', () => {
  it('approves the approved test card and masks its number', async () => {
    const r = await purchase({ transactionReferenceID: 'T-1', custom1: 'order 1' });
    expect(r).toMatchObject({
      responseCode: '0',
      responseMessage: 'Transaction approved',
      paymentCardNumber: '456471XXXXXX0004',
      cardType: 'visa',
      custom1: 'order 1',
      custom2: [],
      custom3: [],
    });
    expect(JSON.stringify(r)).not.toContain('4564710000000004');
  });

  it('gives each test card and trigger its outcome', async () => {
    expect(
      (await purchase({ paymentCardNumber: '4564710000000012', paymentCardExpiry: '0205', paymentCardCSC: undefined }))
        .responseCode,
    ).toBe('4');
    expect(
      (await purchase({ ...card.lowFunds, paymentCardCSC: undefined, transactionAmount: '10.01' })).responseCode,
    ).toBe('5');
    expect(
      (await purchase({ ...card.lowFunds, paymentCardCSC: undefined, transactionAmount: '9.99' })).responseCode,
    ).toBe('0');
    expect(
      (await purchase({ paymentCardNumber: '5163200000000016', paymentCardExpiry: '1219', paymentCardCSC: '728' }))
        .responseCode,
    ).toBe('2');
    expect((await purchase({ paymentCardCSC: '000' })).responseCode).toBe('2');
    expect((await purchase({ transactionAmount: '102.33' })).responseMessage).toBe('Card has expired');
    // The card listed with any expiry takes a past one too, as the Python client of 2016 pays with 05/17.
    expect(
      (await purchase({ paymentCardNumber: '5123456789012346', paymentCardExpiry: '0517', paymentCardCSC: '123' }))
        .responseCode,
    ).toBe('0');
    expect(
      (await purchase({ paymentCardNumber: '5123456789012346', paymentCardExpiry: '0140', paymentCardCSC: '123' }))
        .responseCode,
    ).toBe('0');
    expect((await purchase({ paymentCardNumber: '4111111111111111' })).responseCode).toBe('1');
  });

  it('refuses a number that fails the Luhn check, and stores nothing', async () => {
    const before = await counts(t.sandbox);
    const r = await purchase({ paymentCardNumber: '4564710000000005' });
    expect(r).toEqual({
      responseCode: '-2',
      responseMessage: "Field 'paymentCardNumber' is invalid: fails the Luhn check",
    });
    expect(await counts(t.sandbox)).toEqual(before);
  });

  it('declines a blacklisted card', async () => {
    await t.client.addBlacklistedCard({
      cardName: 'X',
      cardNumber: '4564710000000004',
      cardExpiryMonth: '02',
      cardExpiryYear: '29',
    });
    expect(
      await t.client.queryBlacklistedCard({
        cardNumber: '4564710000000004',
        cardExpiryMonth: '02',
        cardExpiryYear: '29',
      }),
    ).toMatchObject({ blacklisted: '1' });
    const r = await purchase();
    expect(r.responseCode).toBe('9');
    const entry = await t.client.queryBlacklistedCard({
      cardNumber: '4564710000000004',
      cardExpiryMonth: '02',
      cardExpiryYear: '29',
    });
    await t.client.removeBlacklistedCard({ cardID: (entry as { cardID: string }).cardID });
    expect((await purchase()).responseCode).toBe('0');
  });
});

describe('authorise → capture → refund → void', () => {
  it('captures in parts up to the authorisation, never beyond, and refunds up to what was captured', async () => {
    const auth = await t.client.processAuth({
      transactionAmount: '50.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'Deposit',
      ...customer,
      ...card.visa,
    } as never);
    expect(auth.responseCode).toBe('0');
    const id = (auth as { transactionID: string }).transactionID;
    const capture = (amount: string) =>
      t.client.processCapture({
        transactionID: id,
        transactionAmount: '50.00',
        transactionCurrency: 'AUD',
        captureAmount: amount,
      });
    expect((await capture('30.00')).responseCode).toBe('0');
    const before = await counts(t.sandbox);
    expect(await capture('20.01')).toEqual({
      responseCode: '-2',
      responseMessage: "Field 'captureAmount' is invalid: Capture amount is greater than the transaction amount",
    });
    expect(await counts(t.sandbox)).toEqual(before);
    expect((await capture('20.00')).responseCode).toBe('0');
    expect(await t.client.queryCard({ transactionID: id })).toMatchObject({
      transactionStatus: 'captured',
      capturedAmount: '50.00',
      refundedAmount: '0.00',
      transactionType: 'auth',
    });
    const refund = (amount: string) =>
      t.client.refundCard({
        transactionID: id,
        transactionAmount: '50.00',
        transactionCurrency: 'AUD',
        refundAmount: amount,
      });
    expect((await refund('45.00')).responseCode).toBe('0');
    expect((await refund('5.01')).responseMessage).toBe(
      "Field 'refundAmount' is invalid: Refund amount is greater than the amount captured",
    );
    expect(await t.client.queryCard({ transactionID: id })).toMatchObject({
      transactionStatus: 'refunded',
      refundedAmount: '45.00',
    });
    expect((await t.client.processVoid({ transactionID: id })).responseCode).toBe('-2');
  });

  it('60 captures of 1.00 at once against 25.00 authorised: 25 approved, 35 refused, 25.00 captured; 40 refunds of 1.00 stop at 25.00', async () => {
    const auth = (await t.client.processAuth({
      transactionAmount: '25.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'CaptureRace',
      ...customer,
      ...card.visa,
    } as never)) as { transactionID: string };
    const id = auth.transactionID;
    const captures = await Promise.all(
      Array.from({ length: 60 }, () =>
        t.client.processCapture({
          transactionID: id,
          transactionAmount: '25.00',
          transactionCurrency: 'AUD',
          captureAmount: '1.00',
        }),
      ),
    );
    expect(captures.filter((r) => r.responseCode === '0')).toHaveLength(25);
    expect(captures.filter((r) => r.responseCode === '-2')).toHaveLength(35);
    expect(await t.client.queryCard({ transactionID: id })).toMatchObject({ capturedAmount: '25.00' });
    expect(
      (await t.sandbox.store.get(
        "SELECT count(*) AS n FROM transactions WHERE parent_id = ? AND kind = 'capture'",
        id,
      ))!.n,
    ).toBe(25);
    const refunds = await Promise.all(
      Array.from({ length: 40 }, () =>
        t.client.refundCard({
          transactionID: id,
          transactionAmount: '25.00',
          transactionCurrency: 'AUD',
          refundAmount: '1.00',
        }),
      ),
    );
    expect(refunds.filter((r) => r.responseCode === '0')).toHaveLength(25);
    expect(await t.client.queryCard({ transactionID: id })).toMatchObject({ refundedAmount: '25.00' });
  });

  it('voids an uncaptured authorisation once', async () => {
    const auth = (await t.client.processAuth({
      transactionAmount: '20.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'Hold',
      ...customer,
      ...card.visa,
    } as never)) as { transactionID: string };
    expect((await t.client.processVoid({ transactionID: auth.transactionID })).responseCode).toBe('0');
    expect((await t.client.processVoid({ transactionID: auth.transactionID })).responseMessage).toBe(
      'MW -016:transactionID has already been reversed',
    );
    expect(
      (
        await t.client.processCapture({
          transactionID: auth.transactionID,
          transactionAmount: '20.00',
          transactionCurrency: 'AUD',
          captureAmount: '1.00',
        })
      ).responseCode,
    ).toBe('-2');
  });

  it('voids a purchase, as ActiveMerchant does against the real sandbox; then it refunds nothing and voids once', async () => {
    const sale = (await purchase({ transactionAmount: '12.00' })) as { transactionID: string };
    // ActiveMerchant writes the amount in cents ('1200'); the gateway does not read it.
    expect(await t.client.processVoid({ transactionID: sale.transactionID, transactionAmount: '1200' })).toMatchObject({
      responseCode: '0',
      responseMessage: 'Transaction approved',
    });
    expect(await t.client.queryCard({ transactionID: sale.transactionID })).toMatchObject({
      transactionStatus: 'void',
    });
    const reversed = { responseCode: '-2', responseMessage: 'MW -016:transactionID has already been reversed' };
    expect(
      await t.client.refundCard({
        transactionID: sale.transactionID,
        transactionAmount: '12.00',
        transactionCurrency: 'AUD',
        refundAmount: '1.00',
      }),
    ).toEqual(reversed);
    expect(await t.client.processVoid({ transactionID: sale.transactionID })).toEqual(reversed);
    expect(await t.client.processVoid({ transactionID: '1336-00000000-0000-0000-0000-000000000000' })).toEqual({
      responseCode: '-2',
      responseMessage: 'MW - 011:Invalid transactionID',
    });
  });

  it('finds a transaction by its reference', async () => {
    await purchase({ transactionReferenceID: 'REF-LOOKUP' });
    expect(await t.client.queryCard({ transactionReferenceID: 'REF-LOOKUP' })).toMatchObject({
      responseCode: '0',
      transactionReferenceID: 'REF-LOOKUP',
      transactionType: 'purchase',
      transactionStatus: 'approved',
    });
  });
});

describe('the vault', () => {
  it('rotates cardKey on a processed token purchase, never on a refused one', async () => {
    const added = (await t.client.token.addCard({
      cardName: 'Jane Citizen',
      cardNumber: '4564710000000004',
      cardExpiryMonth: '02',
      cardExpiryYear: '29',
    })) as { cardID: string; cardKey: string };
    const buy = (key: string, replace: string, amount = '15.00') =>
      t.client.token.processCard({
        cardID: added.cardID,
        cardKey: key,
        cardKeyReplace: replace,
        transactionAmount: amount,
        transactionCurrency: 'AUD',
        transactionProduct: 'Plan',
      });
    const before = await counts(t.sandbox);
    expect((await buy('WrongKey00000000', 'NewKey0000000001')).responseMessage).toBe(
      "Field 'cardKey' is invalid: does not match the stored card",
    );
    expect(await counts(t.sandbox)).toEqual(before);
    expect((await buy(added.cardKey, 'NewKey0000000001')).responseCode).toBe('0');
    expect((await buy(added.cardKey, 'NewKey0000000002')).responseCode).toBe('-2');
    // A decline (code above 0) is processed: the key is replaced too (seed §4.2).
    expect((await buy('NewKey0000000001', 'NewKey0000000003', '102.33')).responseCode).toBe('4');
    expect((await buy('NewKey0000000003', 'NewKey0000000004')).responseCode).toBe('0');
    expect(
      await t.client.token.cardInfo({ cardID: added.cardID, cardKey: 'NewKey0000000004', paymentFingerprint: '1' }),
    ).toMatchObject({
      responseCode: '0',
      cardBin: '456471',
      cardNumberFirst: '4564',
      cardNumberLast: '0004',
      cardBrand: 'visa',
      paymentFingerprint: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(
      (
        await t.client.token.changeExpiry({
          cardID: added.cardID,
          cardKey: 'NewKey0000000004',
          cardExpiryMonth: '03',
          cardExpiryYear: '31',
        })
      ).responseCode,
    ).toBe('0');
    expect((await t.client.token.removeCard({ cardID: added.cardID, cardKey: 'NewKey0000000004' })).responseCode).toBe(
      '0',
    );
    expect((await t.client.token.cardInfo({ cardID: added.cardID, cardKey: 'NewKey0000000004' })).responseCode).toBe(
      '-2',
    );
  });

  it('cardKey and cardKeyReplace are optional: cardID alone pays and keeps the key; a key sent must match; removeCard takes cardID alone', async () => {
    const added = (await t.client.token.addCard({
      cardName: 'Jane Citizen',
      cardNumber: '4564710000000004',
      cardExpiryMonth: '02',
      cardExpiryYear: '29',
    })) as { cardID: string; cardKey: string };
    const pay = (keys: Record<string, string>) =>
      t.client.token.processCard({
        cardID: added.cardID,
        ...keys,
        transactionAmount: '5.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Plan',
      });
    expect((await pay({})).responseCode).toBe('0');
    expect((await t.client.token.cardInfo({ cardID: added.cardID, cardKey: added.cardKey })).responseCode).toBe('0');
    expect((await pay({ cardKey: 'WrongKey00000000' })).responseMessage).toBe(
      "Field 'cardKey' is invalid: does not match the stored card",
    );
    expect((await pay({ cardKey: added.cardKey })).responseCode).toBe('0');
    expect((await t.client.token.cardInfo({ cardID: added.cardID, cardKey: added.cardKey })).responseCode).toBe('0');
    expect((await t.client.token.removeCard({ cardID: added.cardID })).responseCode).toBe('0');
    expect((await t.client.token.cardInfo({ cardID: added.cardID, cardKey: added.cardKey })).responseCode).toBe('-2');
  });

  it('a payframe purchase with addCard=1 stores the card and answers cardID, cardKey and ivrCardID, which then pay', async () => {
    const payframe = {
      transactionAmount: '7.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'Vaulted',
      customerCountry: 'AU',
      customerState: 'QLD',
      customerCity: 'Brisbane',
      customerAddress: '1 Test St',
      customerPostCode: '4000',
      payframeToken: 'pf8f2c0a1b6d4e93',
      payframeKey: 'pk1',
    };
    const paid = (await t.client.processCard({ ...payframe, addCard: '1' } as never)) as Record<string, string>;
    expect(paid).toMatchObject({
      responseCode: '0',
      cardID: expect.any(String),
      cardKey: expect.any(String),
      ivrCardID: expect.stringMatching(/^[0-9]+$/),
    });
    expect(await t.client.token.cardInfo({ cardID: paid.cardID!, cardKey: paid.cardKey! })).toMatchObject({
      responseCode: '0',
      cardNumberLast: '0004',
    });
    expect(
      (
        await t.client.token.processCard({
          cardID: paid.cardID!,
          transactionAmount: '1.00',
          transactionCurrency: 'AUD',
          transactionProduct: 'Again',
        })
      ).responseCode,
    ).toBe('0');
    const plain = (await t.client.processCard(payframe as never)) as Record<string, string>;
    expect(plain.responseCode).toBe('0');
    expect(plain).not.toHaveProperty('cardID');
  });

  it('50 purchases at once with the same cardKey: exactly one is processed and rotates the key', async () => {
    const added = (await t.client.token.addCard({
      cardName: 'Race',
      cardNumber: '4564710000000004',
      cardExpiryMonth: '02',
      cardExpiryYear: '29',
    })) as { cardID: string; cardKey: string };
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        t.client.token.processCard({
          cardID: added.cardID,
          cardKey: added.cardKey,
          cardKeyReplace: `Race${String(i).padStart(12, '0')}`,
          transactionAmount: '1.00',
          transactionCurrency: 'AUD',
          transactionProduct: 'Race',
        }),
      ),
    );
    const processed = results.map((r, i) => [r, i] as const).filter(([r]) => isApproved(r));
    expect(processed).toHaveLength(1);
    expect(results.filter((r) => r.responseCode === '-2')).toHaveLength(49);
    const winner = `Race${String(processed[0]![1]).padStart(12, '0')}`;
    expect((await t.client.token.cardInfo({ cardID: added.cardID, cardKey: winner })).responseCode).toBe('0');
    const rows = await t.sandbox.store.all("SELECT * FROM transactions WHERE product = 'Race'");
    expect(rows).toHaveLength(1);
  });

  it('keeps card numbers encrypted at rest and never stores the security code', async () => {
    await t.client.token.addCard({
      cardName: 'Secret',
      cardNumber: '5123456789012346',
      cardExpiryMonth: '05',
      cardExpiryYear: '30',
    });
    await t.client.processCard({
      transactionAmount: '3.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'CSC',
      ...customer,
      paymentCardNumber: '5123456789012346',
      paymentCardExpiry: '0530',
      paymentCardName: 'S',
      paymentCardCSC: '123',
    } as never);
    const dump =
      JSON.stringify(await t.sandbox.store.all('SELECT * FROM cards')) +
      JSON.stringify(await t.sandbox.store.all('SELECT * FROM transactions'));
    expect(dump).not.toContain('5123456789012346');
    expect(dump).not.toMatch(/"123"/);
  });
});

describe("the vault's fingerprint of a card", () => {
  const VISA = '4564710000000004';
  /** A vault key whose first keyed digest of the card reads as a card number (about 1 key in 500). */
  function keyWithCardLikeDigest(): Buffer {
    for (let i = 0; ; i++) {
      const key = createHash('sha256').update(`vault key ${i}`).digest();
      if (findCardNumber(createHmac('sha256', key).update(VISA).digest('hex').slice(0, 32))) return key;
    }
  }

  it('never reads as a card number: cardInfo answers it, the same for every entry of the card', async () => {
    const key = keyWithCardLikeDigest();
    const s = await startSandbox({ env: { PGW_SANDBOX_DATA_KEY: key.toString('base64') } });
    try {
      const entry = { cardName: 'Jane Citizen', cardNumber: VISA, cardExpiryMonth: '02', cardExpiryYear: '29' };
      const info = async () => {
        const added = (await s.client.token.addCard(entry)) as { cardID: string; cardKey: string };
        return s.client.token.cardInfo({ cardID: added.cardID, cardKey: added.cardKey, paymentFingerprint: '1' });
      };
      const [first, second] = [await info(), await info()];
      expect(first).toMatchObject({ responseCode: '0', paymentFingerprint: expect.stringMatching(/^[0-9a-f]{32}$/) });
      const print = (first as { paymentFingerprint: string }).paymentFingerprint;
      expect(findCardNumber(print)).toBe(false);
      expect(second).toMatchObject({ responseCode: '0', paymentFingerprint: print });
    } finally {
      await s.close();
    }
  });

  // A store kept from before the fingerprint was derived again holds such a card's rows under its
  // first digest (sandbox/card-fingerprint.ts): made here by writing that digest into the rows.
  it('finds the rows a sandbox stored under the earlier fingerprint: the blacklist still declines, the vault answers the current one', async () => {
    const key = keyWithCardLikeDigest();
    const earlier = createHmac('sha256', key).update(VISA).digest('hex').slice(0, 32);
    const s = await startSandbox({ env: { PGW_SANDBOX_DATA_KEY: key.toString('base64') } });
    try {
      const listed = { cardName: 'X', cardNumber: VISA, cardExpiryMonth: '02', cardExpiryYear: '29' };
      const query = { cardNumber: VISA, cardExpiryMonth: '02', cardExpiryYear: '29' };
      const { cardID: entryID } = (await s.client.addBlacklistedCard(listed)) as { cardID: string };
      const asBefore = () => s.sandbox.store.run('UPDATE blacklist SET fingerprint = ?', earlier);
      const rows = () => s.sandbox.store.all('SELECT entry_id, fingerprint FROM blacklist');

      await asBefore();
      expect(await s.client.queryBlacklistedCard(query)).toMatchObject({ blacklisted: '1', cardID: entryID });
      const [moved] = await rows();
      expect(moved).toMatchObject({ entry_id: entryID });
      expect(moved!.fingerprint).not.toBe(earlier);

      await asBefore();
      const declined = await s.client.processCard({
        transactionAmount: '10.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Tea',
        ...customer,
        ...card.visa,
      } as never);
      expect(declined.responseCode).toBe('9');

      await asBefore();
      expect(await s.client.addBlacklistedCard(listed)).toMatchObject({ cardID: entryID });
      expect(await rows()).toEqual([{ entry_id: entryID, fingerprint: moved!.fingerprint }]);

      // Listed again since (the old advice): the newer entry is the card's one entry, the older one
      // dropped, so that removing the newer unblocks the card.
      await s.sandbox.store.run(
        "INSERT INTO blacklist (entry_id, merchant_id, fingerprint, bin, last4, expiry_month, expiry_year, name) SELECT 'BLOLDENTRY01', merchant_id, ?, bin, last4, '01', '28', name FROM blacklist",
        earlier,
      );
      expect(await s.client.queryBlacklistedCard(query)).toMatchObject({ blacklisted: '1', cardID: entryID });
      expect(await rows()).toEqual([{ entry_id: entryID, fingerprint: moved!.fingerprint }]);
      await s.client.removeBlacklistedCard({ cardID: entryID });
      expect(await s.client.queryBlacklistedCard(query)).toMatchObject({ blacklisted: '0' });

      const added = (await s.client.token.addCard({ ...listed, cardName: 'Jane Citizen' })) as {
        cardID: string;
        cardKey: string;
      };
      await s.sandbox.store.run('UPDATE cards SET fingerprint = ?', earlier);
      expect(
        await s.client.token.cardInfo({ cardID: added.cardID, cardKey: added.cardKey, paymentFingerprint: '1' }),
      ).toMatchObject({ responseCode: '0', paymentFingerprint: moved!.fingerprint });
      expect(await s.sandbox.store.all('SELECT fingerprint FROM cards')).toEqual([{ fingerprint: moved!.fingerprint }]);
    } finally {
      await s.close();
    }
  });
});

// Finding: a dozen spellings of a card number passed the free-text guard and came back whole in the
// settlement file and in queryCard: separators other than spaces and dashes, digits of other scripts,
// invisible characters between digits. A free-text field is read as a person or a paste writes it:
// NFKC, every decimal digit as its value, invisible characters dropped, up to three separators of any
// kind between digits.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { holdsCardNumber } from '../../sandbox/guard.ts';
import { disguised } from './disguises.ts';
import { counts, hardeningSandbox, purchase, send, signed } from './support.ts';

const sb = await hardeningSandbox();
afterAll(() => sb.close());

const FIELDS = [
  'transactionProduct',
  'customerName',
  'customerAddress',
  'customerCity',
  'custom1',
  'custom2',
  'custom3',
];

describe('card numbers in disguise', () => {
  it('are found in any spelling', () => {
    fc.assert(
      fc.property(disguised, (text) => {
        expect(holdsCardNumber(text), JSON.stringify(text)).toBe(true);
      }),
      { seed: 2816, numRuns: 2000 },
    );
  });

  it('are refused -2 naming the field in every free-text field, and nothing is stored', async () => {
    await fc.assert(
      fc.asyncProperty(disguised, fc.constantFrom(...FIELDS), async (text, field) => {
        const before = await counts(sb);
        const answer = await send(sb, signed('processCard', purchase({ [field]: text })));
        expect(answer.json, JSON.stringify(text)).toMatchObject({
          responseCode: '-2',
          responseMessage: expect.stringContaining(`'${field}'`),
        });
        expect(await counts(sb)).toEqual(before);
      }),
      { seed: 2817, numRuns: 200 },
    );
  });

  it('text without a Luhn-valid run of 13 digits passes', () => {
    expect(holdsCardNumber('Order 12, qty 3: 4 boxes at 10.00 AUD; 2026-11-24 12:00')).toBe(false);
    expect(holdsCardNumber('Tel +61 7 3000 1234')).toBe(false);
    expect(holdsCardNumber('4564 7100 0000 0005')).toBe(false);
    // A timestamp's digits are no card number, whatever they add up to.
    fc.assert(
      fc.property(fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }), (d) => {
        expect(holdsCardNumber(`at ${d.toISOString().slice(0, 19).replace('T', ' ')}`)).toBe(false);
      }),
    );
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 80 }).filter((s) => !/\p{N}/u.test(s)),
        (s) => !holdsCardNumber(s),
      ),
    );
  });
});

// Finding: a dozen spellings of a card number passed the free-text guard and came back whole in the
// settlement file and in queryCard: separators other than spaces and dashes, digits of other scripts,
// invisible characters between digits. A free-text field is read as a person or a paste writes it:
// NFKC, every decimal digit as its value, invisible characters dropped, up to three separators of any
// kind between digits.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { holdsCardNumber } from '../../sandbox/guard.ts';
import { counts, hardeningSandbox, purchase, send, signed } from './support.ts';

const sb = await hardeningSandbox();
afterAll(() => sb.close());

/** The zero of decimal digit sets a person can type or paste (ASCII, fullwidth, Arabic-Indic, Devanagari, Bengali, Thai, mathematical bold, Myanmar). */
const ZEROS = [0x30, 0xff10, 0x660, 0x6f0, 0x966, 0x9e6, 0xe50, 0x1d7ce, 0x1040];
const SEPARATORS = [
  ' ',
  '-',
  '.',
  '/',
  '_',
  ',',
  ':',
  '\u00a0',
  '\u2009',
  '\u2013',
  '\u2014',
  '\u00b7',
  '\t',
  '\n',
  ' - ',
  '*',
  '|',
  '\u3000',
  '+',
  '~',
];
const INVISIBLE = ['\u200b', '\u2060', '\u00ad', '\ufeff', '\u200c', '\u200d', '\u2062', '\u180e', '\u034f'];

const luhnCheckDigit = (body: string) => {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
};

/** A Luhn-valid card number of 13 to 19 digits starting 2 to 6. */
const cardNumber = fc
  .tuple(fc.integer({ min: 2, max: 6 }), fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 11, maxLength: 17 }))
  .map(([first, rest]) => {
    const body = `${first}${rest.join('')}`;
    return body + luhnCheckDigit(body);
  });

/** The number written with each digit in a chosen script and what a paste puts between digits. */
const disguised = fc
  .tuple(
    cardNumber,
    fc.array(fc.constantFrom(...ZEROS), { minLength: 1, maxLength: 4 }),
    fc.array(fc.oneof(fc.constant(''), fc.constantFrom(...SEPARATORS), fc.constantFrom(...INVISIBLE)), {
      minLength: 19,
      maxLength: 19,
    }),
    fc.constantFrom('', 'Gift for ', 'card: ', 'ref (', '«'),
    fc.constantFrom('', ' thanks', ')', '»', '.'),
  )
  .map(([number, zeros, between, before, after]) => {
    const digits = [...number].map((d, i) => String.fromCodePoint(zeros[i % zeros.length]! + Number(d)));
    return before + digits.map((d, i) => (i ? between[i - 1] + d : d)).join('') + after;
  });

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
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 80 }).filter((s) => !/\p{N}/u.test(s)),
        (s) => !holdsCardNumber(s),
      ),
    );
  });
});

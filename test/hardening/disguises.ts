// Card numbers as a person or a paste writes them: digits of other scripts, any separator of any width
// (colons, tabs, unicode spaces, runs of dashes and dots), invisible characters between digits,
// letters glued on either side, a hex prefix. Shared by the disguised-card tests and the fuzz run.
import fc from 'fast-check';

/** The zero of decimal digit sets a person can type or paste (ASCII, fullwidth, Arabic-Indic, Devanagari, Bengali, Thai, mathematical bold, Myanmar). */
const ZEROS = [0x30, 0xff10, 0x660, 0x6f0, 0x966, 0x9e6, 0xe50, 0x1d7ce, 0x1040];
const SEPARATORS = [
  ' ',
  '-',
  '.',
  '/',
  '_',
  ',',
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
  // Wide and colon separators (issue 39): several spaces, tabs, unicode spaces, runs of dashes and dots.
  '    ',
  '\t\t',
  ' \u2003 ',
  '\u2003',
  '\u205f',
  '\u3000\u3000',
  ' -- ',
  '...',
  '. . .',
  ':',
  ' : ',
  '::',
  '\r\n',
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
export const cardNumber = fc
  .tuple(fc.integer({ min: 2, max: 6 }), fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 11, maxLength: 17 }))
  .map(([first, rest]) => {
    const body = `${first}${rest.join('')}`;
    return body + luhnCheckDigit(body);
  });

/** The number written with each digit in a chosen script and what a paste puts between digits. */
export const disguised = fc
  .tuple(
    cardNumber,
    fc.array(fc.constantFrom(...ZEROS), { minLength: 1, maxLength: 4 }),
    fc.array(fc.oneof(fc.constant(''), fc.constantFrom(...SEPARATORS), fc.constantFrom(...INVISIBLE)), {
      minLength: 19,
      maxLength: 19,
    }),
    // Around it: nothing, words, punctuation, and (issue 39) letters glued on or a hex prefix.
    fc.constantFrom('', 'Gift for ', 'card: ', 'ref (', '«', 'ref', 'x', 'ORDER', '0x', '0X', 'id', 'Ω'),
    fc.constantFrom('', ' thanks', ')', '»', '.', 'ref', 'x', 'Z', 'abc', 'h'),
  )
  .map(([number, zeros, between, before, after]) => {
    const digits = [...number].map((d, i) => String.fromCodePoint(zeros[i % zeros.length]! + Number(d)));
    return before + digits.map((d, i) => (i ? between[i - 1] + d : d)).join('') + after;
  });

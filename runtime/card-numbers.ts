// Card numbers in text, found by kind, for every component that must not keep one: the sandbox's
// guard on what a caller sends, the stubs' check of every answer and file, every log line, the
// contract suite's reports. One definition, so that what the guard refuses is what a log masks.
//
// A card number is 13 to 19 digits starting 2 to 6 (the payment-card ranges of ISO/IEC 7812) that
// pass the Luhn check, however it is written:
// - around it, anything: letters glued on (ref4564…, 0x4564…), punctuation, nothing;
// - between its digits, separators of any kind and any width (spaces, tabs, unicode spaces, dashes,
//   dots, colons, slashes, commas…) and invisible characters (U+200B, soft hyphens, combining marks);
// - its digits in any script (fullwidth, Arabic-Indic, Devanagari, mathematical…), read as their
//   values, NFKC's compatibility digits too (superscripts, circled).
// It begins where a run of digits begins (after a letter, a separator or nothing: a run of 20 digits
// is one number, not a card behind two digits) and may end inside a run (a card with the expiry
// written after it).
//
// False positives, by design rather than by luck (test/hardening/card-false-positives.test.ts
// measures them on the sandbox's own identifiers and times):
// - letters break a number: the digits of a hex hash or a token split by its letters are not joined;
// - a date or date-time of the gateway's forms (2026-11-24, 2026-11-24 20:26:54, with T, fractions,
//   a Z) that is a real calendar time is a time, not a card: its digits join nothing;
// - a UUID written as UUIDs are (8-4-4-4-12 hex digits, glued to no other letter or digit, at least
//   one of them a letter: one of decimal digits only may be a card written so) is an identifier, not a
//   card: its digits join nothing. The gateway's transaction IDs are one after
//   1336- (1336-20be3569-b600-11e6-b9c3-005056b209e0); a server that draws them so had one answer in
//   350 or so withheld as a leak (0.25 to 0.3 %), where a UUID's last groups read as 13 digits that
//   pass Luhn;
// - what the caller says a field is: `breaks` makes characters end a number (a CSV file's commas and
//   line ends, so that its cells are read one by one).
// The sandbox makes its own identifiers with this same reading (sandbox/ids.ts draws again any that
// holds a card number), and the stubs do not scan the hashes they compute themselves.

/** How a code point reads: a digit (its value), a letter (ends a number), invisible (skipped), or a separator. */
const LETTER = -1;
const SEPARATOR = -2;
const INVISIBLE = -3;

const classes = new Map<number, number>();
const NON_ASCII_DIGIT = /^\p{Nd}$/u;
const INVISIBLE_CLASS = /^[\p{Cf}\p{Mn}\p{Me}]$/u;
const LETTER_OR_NUMBER = /^[\p{L}\p{N}]$/u;

/** A decimal digit's value: Unicode encodes each set of decimal digits as ten consecutive code points, 0 to 9. */
function digitValue(codePoint: number): number {
  let start = codePoint;
  while (NON_ASCII_DIGIT.test(String.fromCodePoint(start - 1))) start--;
  return (codePoint - start) % 10;
}

function classOf(codePoint: number): number {
  if (codePoint < 128) {
    if (codePoint >= 48 && codePoint <= 57) return codePoint - 48;
    if ((codePoint >= 65 && codePoint <= 90) || (codePoint >= 97 && codePoint <= 122)) return LETTER;
    return SEPARATOR;
  }
  let known = classes.get(codePoint);
  if (known !== undefined) return known;
  const ch = String.fromCodePoint(codePoint);
  const folded = ch.normalize('NFKC');
  if (folded.length === 1 && folded >= '0' && folded <= '9') known = folded.charCodeAt(0) - 48;
  else if (NON_ASCII_DIGIT.test(ch)) known = digitValue(codePoint);
  else if (INVISIBLE_CLASS.test(ch)) known = INVISIBLE;
  else if (LETTER_OR_NUMBER.test(ch)) known = LETTER;
  else known = SEPARATOR;
  // Bounded: a text of every code point cannot grow the table past the code points that exist.
  if (classes.size < 65_536) classes.set(codePoint, known);
  return known;
}

/** One run of digits: where it is in the text, its digits, and what stands between it and the run before. */
interface Run {
  start: number;
  end: number;
  digits: string;
  /** Index of each digit in the text (to mask it where it stands). */
  at: number[];
  /** The separators before this run, after the previous one of its chain (the text between them). */
  gap: string;
}

/** A card number found: the digits, and each digit's index in the text. */
export interface FoundCard {
  digits: string;
  at: number[];
}

export interface CardReading {
  /** Characters that end a number as a letter does (a file's own delimiters). */
  breaks?: string;
}

/** Whether digits pass the Luhn check. */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = digits.length - 1, odd = false; i >= 0; i--, odd = !odd) {
    let d = digits.charCodeAt(i) - 48;
    if (odd) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The chains of runs in a text: runs of digits joined by separators only (no letter between). */
function* chains(text: string, breaks: string): Generator<Run[]> {
  let chain: Run[] = [];
  let run: Run | undefined;
  let gap = '';
  let gapStart = -1;
  for (let i = 0; i < text.length; ) {
    const codePoint = text.codePointAt(i)!;
    const width = codePoint > 0xffff ? 2 : 1;
    const kind = breaks.includes(text[i]!) ? LETTER : classOf(codePoint);
    if (kind >= 0) {
      if (!run) {
        run = { start: i, end: i + width, digits: '', at: [], gap: gapStart < 0 ? '' : gap };
        chain.push(run);
      }
      run.digits += String.fromCharCode(48 + kind);
      run.at.push(i);
      run.end = i + width;
      gap = '';
      gapStart = -1;
    } else if (kind === INVISIBLE) {
      // Skipped: neither ends a run nor separates (a soft hyphen inside a number).
    } else if (kind === SEPARATOR) {
      if (chain.length) {
        if (gapStart < 0) gapStart = i;
        gap += text.slice(i, i + width);
      }
      run = undefined;
    } else {
      if (chain.length) yield chain;
      chain = [];
      run = undefined;
      gap = '';
      gapStart = -1;
    }
    i += width;
  }
  if (chain.length) yield chain;
}

/** Whether a run is `length` digits at most `max`, after exactly the separator `gap`. */
const part = (run: Run | undefined, gap: string, length: number, min: number, max: number): boolean =>
  run !== undefined &&
  run.gap === gap &&
  run.digits.length === length &&
  Number(run.digits) >= min &&
  Number(run.digits) <= max;

/** Whether runs i.. spell a date of the gateway's forms that is a real one; the number of runs it takes, or 0. */
function dateAt(chain: Run[], i: number): number {
  const year = chain[i]!;
  if (year.digits.length !== 4) return 0;
  if (!part(chain[i + 1], '-', 2, 1, 12) || !part(chain[i + 2], '-', 2, 1, 31)) return 0;
  // A time after it (HH:MM, HH:MM:SS, a fraction of a second): part of the date-time.
  if (!part(chain[i + 3], ' ', 2, 0, 23) || !part(chain[i + 4], ':', 2, 0, 59)) return 3;
  if (!part(chain[i + 5], ':', 2, 0, 60)) return 5;
  const fraction = chain[i + 6];
  if (fraction?.gap !== '.' || fraction.digits.length > 9) return 6;
  return 7;
}

/** The chain cut at each date and date-time in it: what is left to read for card numbers. */
function withoutDates(chain: Run[]): Run[][] {
  const parts: Run[][] = [];
  let part: Run[] = [];
  for (let i = 0; i < chain.length; ) {
    const taken = dateAt(chain, i);
    if (taken) {
      if (part.length) parts.push(part);
      part = [];
      i += taken;
    } else part.push(chain[i++]!);
  }
  if (part.length) parts.push(part);
  return parts;
}

const UUID = /(?<![\p{L}\p{N}])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![\p{L}\p{N}])/giu;
const HEX_LETTER = /[a-f]/i;
/** The text with each UUID in it written as letters, of the same length: where the digits are stays where it was. */
const withoutUuids = (text: string): string =>
  text.includes('-') ? text.replace(UUID, (uuid) => (HEX_LETTER.test(uuid) ? 'x'.repeat(uuid.length) : uuid)) : text;

/**
 * Each place a number begins in the text (a run's start, dates, date-times and UUIDs left out) with
 * the digits read from there: up to 19, over the separators between runs. What findCardNumbers judges.
 */
export function* numbersIn(text: string, reading: CardReading = {}): Generator<FoundCard> {
  for (const whole of chains(withoutUuids(text), reading.breaks ?? '')) {
    let total = 0;
    for (const run of whole) total += run.digits.length;
    if (total < 13) continue;
    for (const chain of withoutDates(whole)) {
      for (let i = 0; i < chain.length; i++) {
        let digits = '';
        const at: number[] = [];
        for (let j = i; j < chain.length && digits.length < 19; j++) {
          digits += chain[j]!.digits;
          at.push(...chain[j]!.at);
        }
        if (digits.length >= 13) yield { digits: digits.slice(0, 19), at: at.slice(0, 19) };
      }
    }
  }
}

/** Every card number in the text (one per place a number begins at most), in order. */
export function findCardNumbers(text: string, reading: CardReading = {}): FoundCard[] {
  const found: FoundCard[] = [];
  for (const { digits, at } of numbersIn(text, reading)) {
    const first = digits.charCodeAt(0);
    if (first < 50 /* 2 */ || first > 54 /* 6 */) continue;
    for (let length = digits.length; length >= 13; length--) {
      if (luhn(digits.slice(0, length))) {
        found.push({ digits: digits.slice(0, length), at: at.slice(0, length) });
        break;
      }
    }
  }
  return found;
}

/**
 * A quick look that rules most text out without reading it number by number: ASCII text with no
 * stretch of 13 digits between letters (or `breaks`) cannot hold a card number, and neither can a
 * value that is just one of the gateway's dates or timestamps. Other scripts' digits, invisible and
 * control characters are looked at the long way.
 */
const JUST_A_TIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?: ([01]\d|2[0-3]):[0-5]\d(?::([0-5]\d|60))?)?$/;
const breakSets = new Map<string, Uint8Array>();
function breakSet(breaks: string): Uint8Array {
  let set = breakSets.get(breaks);
  if (!set) {
    set = new Uint8Array(128);
    for (let c = 65; c <= 90; c++) set[c] = set[c + 32] = 1;
    for (const c of breaks) if (c.charCodeAt(0) < 128) set[c.charCodeAt(0)] = 1;
    breakSets.set(breaks, set);
  }
  return set;
}
const LETTERS = breakSet('');
function cannotHold(text: string, breaks: string): boolean {
  if (text.length < 13) return true;
  const ends = breaks === '' ? LETTERS : breakSet(breaks);
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++digits === 13) return JUST_A_TIME.test(text);
    } else if (c > 126 || (c < 32 && c !== 9 && c !== 10 && c !== 13)) return false;
    else if (ends[c]) digits = 0;
  }
  return true;
}

/** Whether the text holds a card number in any spelling. */
export function findCardNumber(text: string, reading: CardReading = {}): boolean {
  if (cannotHold(text, reading.breaks ?? '')) return false;
  return findCardNumbers(text, reading).length > 0;
}

/** A card number as every log, answer and report shows it: the first six digits, XXXXXX, the last four. */
export const maskCardNumber = (pan: string): string => `${pan.slice(0, 6)}XXXXXX${pan.slice(-4)}`;

/**
 * The text with every card number in it masked where it stands: each digit but the first six and the
 * last four becomes X, the separators and the rest of the text as they were. Read again until none is
 * left: the X's of a mask are letters, and a number may begin after them in what was one long run.
 */
export function maskCardNumbers(text: string, reading: CardReading = {}): string {
  let masked = text;
  for (;;) {
    if (cannotHold(masked, reading.breaks ?? '')) return masked;
    const found = findCardNumbers(masked, reading);
    if (!found.length) return masked;
    const hidden = new Set<number>();
    for (const card of found) for (const i of card.at.slice(6, -4)) hidden.add(i);
    let out = '';
    for (let i = 0; i < masked.length; ) {
      const width = masked.codePointAt(i)! > 0xffff ? 2 : 1;
      out += hidden.has(i) ? 'X' : masked.slice(i, i + width);
      i += width;
    }
    masked = out;
  }
}

/**
 * The path of the first value (a string, a number, an object's key) holding a card number, each read
 * on its own: two fields side by side are never read as one number. `skip` names the fields not read
 * (where a card number belongs, or a hash computed over the rest).
 */
export function cardNumberPath(value: unknown, skip: (name: string) => boolean = () => false): string | undefined {
  const at = pathTo(value, skip);
  return at === undefined ? undefined : at.reverse().join('').replace(/^\./, '');
}

/** The path's parts, innermost first (built only for the value found): `.key` and `[index]`. */
function pathTo(value: unknown, skip: (name: string) => boolean): string[] | undefined {
  if (typeof value === 'string') return findCardNumber(value) ? [] : undefined;
  if (typeof value === 'number' || typeof value === 'bigint') return findCardNumber(String(value)) ? [] : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = pathTo(value[i], skip);
      if (found) return found.concat(`[${i}]`);
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (key.length >= 13 && findCardNumber(key)) return [`.${key}`];
    if (skip(key)) continue;
    const found = pathTo((value as Record<string, unknown>)[key], skip);
    if (found) return found.concat(`.${key}`);
  }
  return undefined;
}

/** Whether any value in it holds a card number (cardNumberPath), the names in `skip` not read. */
export const cardNumberIn = (value: unknown, skip: ReadonlySet<string>): boolean =>
  cardNumberPath(value, (name) => skip.has(name)) !== undefined;

/**
 * A quick look at a JSON text as JSON.stringify writes it (an answer the stubs send): true when no
 * value in it, nor any key, can hold a card number, so that reading its values one by one
 * (cardNumberIn) would find none; false when they must be read (not that one is there). Every value
 * stands whole in the text and a quote ends it; only a stretch of 13 digits between letters and
 * quotes (outside strings, more digits are counted than any one number holds) sends it to the long
 * way, unless the string it is in is just one of the gateway's dates or timestamps, as cannotHold
 * judges a value. An escape (a backslash), a control character or any non-ASCII character also does.
 */
export function jsonCannotHoldCardNumber(text: string): boolean {
  let digits = 0;
  let inString = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++digits < 13) continue;
      if (!inString) return false;
      const end = text.indexOf('"', i);
      if (end < 0 || !JUST_A_TIME.test(text.slice(start, end))) return false;
      i = end - 1;
    } else if (c === 34 /* " */) {
      inString = !inString;
      start = i + 1;
      digits = 0;
    } else if (c === 92 /* \ */ || c > 126 || c < 32) return false;
    else if (LETTERS[c]) digits = 0;
  }
  return true;
}

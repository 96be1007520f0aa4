// False positives of the card-number reading (runtime/card-numbers.ts), measured on what the sandbox
// itself writes: its identifiers (transaction IDs, card IDs and keys, batch IDs, tokens, references,
// fingerprints (the direct debits' and the vault's keyed ones), 3-D Secure values, receipt and
// authorisation numbers), its times (the gateway's timestamps in UTC and Sydney, dates, times in
// milliseconds) and the hashes it computes. A false positive there is a merchant's own refund
// refused, or a good answer withheld as a leak.
//
// Each source is drawn SAMPLES times (PGW_FP_SAMPLES; 20,000 in npm test, millions for a
// measurement), and its rate written to test-results/card-false-positives.json:
// - identifiers drawn from randomness with room for 13 digits: the raw draw's rate (how often the
//   sandbox draws again) and the identifier's, which is zero by design (sandbox/ids.ts redraws);
// - identifiers and numbers with fewer than 13 digits: zero by their form;
// - timestamps and dates of the gateway's forms: zero by design (a real date-time is a time);
// - times in ms: zero before 2033-05-18 (they start with 1; a card starts 2 to 6); after it the
//   form does not allow zero, and the rate is reported: the sandbox writes no time in ms where the
//   reading applies (answers, files, logs, reports);
// - hex hashes: the form does not allow zero (a run of digits inside one can be a card's); the
//   stubs and the guard do not read the hashes of the operation (they are computed over the rest),
//   and that reading is checked to be zero.
// Times are drawn from a fixed range with a seeded generator: no figure depends on the day it runs.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cardNumberPath, findCardNumber, maskCardNumbers } from '../../runtime/card-numbers.ts';
import { wallTime } from '../../runtime/gateway-time.ts';
import * as ids from '../../sandbox/ids.ts';
import { VaultCrypto } from '../../sandbox/vault-crypto.ts';

const SAMPLES = Number(process.env.PGW_FP_SAMPLES ?? 20_000);
/** The card the vault's fingerprints are drawn for: one card, a fresh key each draw. */
const VISA = '4564710000000004';

/** A seeded generator (mulberry32): the same times on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const between = (random: () => number, from: number, to: number) => Math.floor(from + random() * (to - from));
const Y2000 = Date.parse('2000-01-01T00:00:00Z');
const Y2200 = Date.parse('2200-01-01T00:00:00Z');

interface Source {
  name: string;
  /** Why its rate is what it is. */
  design: string;
  draw: () => string;
  /** The rate is asserted zero (else only reported). */
  zero: boolean;
}

const timeRandom = seeded(3909);
const uuidRandom = seeded(3911);
/** A version 4 UUID as randomUUID() writes one, drawn from a seeded generator: the same ones every run. */
const seededUuid = () => {
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(uuidRandom() * 16).toString(16)).join('');
  const variant = '89ab'[Math.floor(uuidRandom() * 4)]!;
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${variant}${hex(3)}-${hex(12)}`;
};
const msRandom = seeded(3910);
const sources: Source[] = [
  ...(
    [
      ['transaction ID', ids.draws.transactionId, ids.transactionId],
      ['batch ID', ids.draws.batchId, ids.batchId],
      ['merchant ID', ids.draws.merchantId, ids.merchantId],
      ['card key', ids.draws.cardKey, ids.cardKey],
      ['access token', () => ids.draws.token('at'), () => ids.token('at')],
      ['3-D Secure token', () => ids.draws.token('tds'), () => ids.token('tds')],
      ['direct debit fingerprint', ids.draws.fingerprint, ids.fingerprint],
      ['3-D Secure CAVV', ids.draws.cavv, ids.cavv],
      ['3-D Secure XID', ids.draws.threeDSXid, ids.threeDSXid],
      ['payout reference', () => ids.draws.reference('PTX'), () => ids.reference('PTX')],
    ] as const
  ).flatMap(([name, raw, made]): Source[] => [
    { name: `${name} (a raw draw)`, design: 'how often the sandbox draws again', draw: raw, zero: false },
    { name, design: 'zero by design: drawn again until the reading finds none', draw: made, zero: true },
  ]),
  {
    name: 'vault card fingerprint (a raw keyed digest)',
    design: 'how often the vault derives it again',
    draw: () => createHmac('sha256', randomBytes(32)).update(VISA).digest('hex').slice(0, 32),
    zero: false,
  },
  {
    name: 'vault card fingerprint',
    design: 'zero by design: derived again until the reading finds none',
    draw: () => new VaultCrypto().fingerprint(VISA),
    zero: true,
  },
  {
    // What a server team's own IDs look like, made as the spec's example is (not the sandbox's own).
    name: "transaction ID of the spec's form, 1336- and a random UUID",
    design: 'zero by design: a UUID is an identifier, its digits join nothing',
    draw: () => `1336-${seededUuid()}`,
    zero: true,
  },
  { name: 'card ID', design: 'zero by form: KOCI and 8 digits', draw: ids.cardId, zero: true },
  { name: 'blacklist entry ID', design: 'zero by form: BLCK and 8 digits', draw: ids.blacklistId, zero: true },
  { name: 'receipt or authorisation number', design: 'zero by form: 9 digits', draw: () => ids.digits(9), zero: true },
  { name: 'IVR card ID', design: 'zero by form: 8 digits', draw: () => ids.digits(8), zero: true },
  {
    name: 'timestamp (UTC)',
    design: 'zero by design: a real date-time is a time',
    draw: () => wallTime(new Date(between(timeRandom, Y2000, Y2200)), 'UTC'),
    zero: true,
  },
  {
    name: 'timestamp (Australia/Sydney)',
    design: 'zero by design: a real date-time is a time',
    draw: () => wallTime(new Date(between(timeRandom, Y2000, Y2200)), 'Australia/Sydney'),
    zero: true,
  },
  {
    name: 'ISO time with milliseconds',
    design: 'zero by design: a real date-time is a time',
    draw: () => new Date(between(timeRandom, Y2000, Y2200)).toISOString(),
    zero: true,
  },
  {
    name: 'date and amount side by side',
    design: 'zero by design: the date joins nothing',
    draw: () =>
      `${wallTime(new Date(between(timeRandom, Y2000, Y2200)), 'UTC').slice(0, 10)} ${between(timeRandom, 0, 99_999_999)}`,
    zero: true,
  },
  {
    name: 'time in ms, before 2033-05-18',
    design: 'zero by design: starts with 1, a card starts 2 to 6',
    draw: () => String(between(msRandom, 1e12, 2e12)),
    zero: true,
  },
  {
    name: 'time in ms, 2033-05-18 to 2128',
    design: 'the form does not allow zero; the sandbox writes none where the reading applies',
    draw: () => String(between(msRandom, 2e12, 5e12)),
    zero: false,
  },
  {
    name: 'md5 hex (the body hashes)',
    design: 'the form does not allow zero; the guard and the stubs do not read an operation’s hashes',
    draw: () => createHash('md5').update(randomBytes(16)).digest('hex'),
    zero: false,
  },
  {
    name: 'sha256 hex',
    design: 'the form does not allow zero; not read where it is a hash',
    draw: () => createHash('sha256').update(randomBytes(16)).digest('hex'),
    zero: false,
  },
];

describe('false positives of the card-number reading on what the sandbox writes', () => {
  const measured: { name: string; design: string; samples: number; hits: number; rate: number; example?: string }[] =
    [];

  it.each(sources.map((s) => [s.name, s] as const))('%s', (_, source) => {
    let hits = 0;
    let example: string | undefined;
    for (let i = 0; i < SAMPLES; i++) {
      const value = source.draw();
      if (findCardNumber(value)) {
        hits++;
        example ??= value;
      }
    }
    measured.push({
      name: source.name,
      design: source.design,
      samples: SAMPLES,
      hits,
      rate: hits / SAMPLES,
      ...(example ? { example } : {}),
    });
    if (source.zero) expect(hits, `${source.name}: e.g. ${example}`).toBe(0);
    // Every rate reported is small: a reading that flags ordinary values would be no reading.
    else expect(hits / SAMPLES, source.name).toBeLessThan(0.2);
  });

  it('the hashes of an operation are not read: none of them is taken for a card number', () => {
    let hits = 0;
    for (let i = 0; i < SAMPLES; i++) {
      const answer = {
        responseCode: '0',
        transactionID: ids.transactionId(),
        customHash: createHash('md5').update(randomBytes(16)).digest('hex'),
      };
      if (cardNumberPath(answer, (name) => name === 'customHash') !== undefined) hits++;
    }
    expect(hits).toBe(0);
  });

  it("a UUID's digits join nothing, but a card beside one, or in a text that is not quite a UUID, is read", () => {
    // A UUID whose last groups read as a card that passes Luhn (565 659869529893), as a server drew it.
    expect(findCardNumber('1336-b7d4d1d9-1075-4d36-a565-659869529893')).toBe(false);
    expect(findCardNumber('1336-B7D4D1D9-1075-4D36-A565-659869529893')).toBe(false);
    expect(findCardNumber('b7d4d1d9-1075-4d36-a565-659869529893 4564710000000004')).toBe(true);
    expect(findCardNumber('b7d4d1d9-1075-4d36-a565-6598695298931')).toBe(true); // 13 hex in the last group
    expect(findCardNumber('b7d4d1d9-1075-4d36-a565-659869529893-4')).toBe(false);
    // Written as a UUID of decimal digits only: a card may be written so, and is read.
    expect(findCardNumber('55555555-5555-4444-0000-000000000000')).toBe(true);
    expect(maskCardNumbers('id 1336-b7d4d1d9-1075-4d36-a565-659869529893, card 4564 7100 0000 0004')).toBe(
      'id 1336-b7d4d1d9-1075-4d36-a565-659869529893, card 4564 71XX XXXX 0004',
    );
  });

  it('writes the rates', () => {
    mkdirSync('test-results', { recursive: true });
    writeFileSync(
      'test-results/card-false-positives.json',
      `${JSON.stringify({ samples: SAMPLES, measured }, null, 2)}\n`,
    );
    console.log(
      measured
        .map(
          (m) => `${m.name.padEnd(44)} ${String(m.hits).padStart(7)} / ${m.samples} (${(m.rate * 100).toFixed(4)} %)`,
        )
        .join('\n'),
    );
  });
});

// Finding: the contract suite's console, JSON and JUnit reports kept what a server sent as it came: a
// card number in any spelling the old masking did not know (wide separators, glued to letters), control
// characters that forge console lines or move the cursor, and characters XML 1.0 does not allow
// (controls, lone surrogates, U+FFFE), which made the JUnit file not well-formed XML. Whatever a
// result holds, each report now keeps no card-number spelling, no unsafe character, and the JUnit file
// is well-formed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { junit, summary, writeReports, type Result } from '../../contract/report.ts';
import { findCardNumber } from '../../runtime/card-numbers.ts';
import { cardNumber, disguised } from '../hardening/disguises.ts';

/** What a server's answer can put in a failure's reason or a request's text. */
const hostile = fc
  .array(
    fc.oneof(
      disguised,
      fc.tuple(fc.constantFrom('', 'ref', '0x'), cardNumber).map(([a, b]) => a + b),
      fc.constantFrom(
        '\n',
        '\r',
        '\x1b[2J',
        '\x00',
        '\x0b',
        '\x7f',
        '\u0085',
        '\u2028',
        '\u202e',
        '\ud800',
        '\udc00',
        '\ufffe',
        '\uffff',
        ']]>',
        '<',
        '&',
        '"',
      ),
      fc.string({ unit: 'binary', maxLength: 10 }),
    ),
    { minLength: 1, maxLength: 5 },
  )
  .map((parts) => parts.join(''));

const result: fc.Arbitrary<Result> = fc.record({
  operationId: fc.constantFrom('processCard', 'queryCard'),
  tags: fc.constant(['Direct API']).map((t) => [...t]),
  kind: fc.constantFrom('example', 'negative'),
  name: hostile,
  status: fc.constantFrom('passed', 'failed', 'skipped') as fc.Arbitrary<Result['status']>,
  reason: hostile,
  ms: fc.double({ min: 0, max: 10_000, noNaN: true }),
  request: hostile.map((t) => `POST /post\ncontent-type: application/json\n\n${t}`),
  again: hostile,
  replay: hostile,
  details: fc.array(hostile, { maxLength: 3 }),
});

const UNSAFE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069\ufffe\uffff]|\p{Cs}/u;

describe('the contract reports, whatever a server sends', () => {
  it('the console keeps one line per line it writes, no card number, no unsafe character', () => {
    fc.assert(
      fc.property(fc.array(result, { minLength: 1, maxLength: 6 }), (results) => {
        const text = summary(results, 1);
        for (const line of text.split('\n')) {
          expect(UNSAFE.test(line), JSON.stringify(line)).toBe(false);
          expect(findCardNumber(line), line).toBe(false);
        }
      }),
      { seed: 3914, numRuns: 300 },
    );
  });

  it('the JUnit file is well-formed XML and holds no card number', () => {
    fc.assert(
      fc.property(fc.array(result, { minLength: 1, maxLength: 6 }), (results) => {
        const xml = junit(results);
        expect(XMLValidator.validate(xml), xml).toBe(true);
        expect(/[\ufffe\uffff]|\p{Cs}|(?![\t\n\r])\p{Cc}/u.test(xml)).toBe(false);
        expect(findCardNumber(xml)).toBe(false);
      }),
      { seed: 3915, numRuns: 300 },
    );
  });

  it('the JSON file is JSON and none of its values holds a card number', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-report-'));
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(result, { minLength: 1, maxLength: 4 }), async (results) => {
          const file = path.join(dir, 'contract.json');
          await writeReports(results, { json: file }, { base: 'http://127.0.0.1:1', seconds: Math.random() * 100 });
          // The whole file, read as free text, too: a number written in full reads as digits of card length.
          expect(findCardNumber(readFileSync(file, 'utf8'))).toBe(false);
          const strings: string[] = [];
          JSON.parse(readFileSync(file, 'utf8'), (_k, v) => {
            if (typeof v === 'string') strings.push(v);
            return v;
          });
          for (const s of strings) expect(findCardNumber(s), s).toBe(false);
        }),
        { seed: 3916, numRuns: 100 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Finding (#39, work before refusal): an unauthenticated body of a million unknown fields held the
// event loop for seconds before it was refused (JSON.parse, then the unknown-field pass, of a body
// processBatch's 16 MiB limit lets through), and a signed batch whose one line held a field of
// several MiB held it for a second (parsed, searched for card numbers, stored) before the line was
// refused. Now a body past MAX_FIELDS fields and list items is refused by each protocol's reader before
// it parses anything, and a batch line longer than MAX_BATCH_LINE_CHARS before the file is parsed.
// What this holds is the refusal and that it comes before the parse; how long the event loop is held
// is measured by `npm run bench -- --work-before-refusal` (never timed here).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseJson } from '../../runtime/protocols/json.ts';
import { readForm } from '../../runtime/protocols/form.ts';
import { MAX_FIELDS, TOO_MANY_FIELDS } from '../../runtime/protocols/protocol.ts';
import type { RunningSandbox } from '../../sandbox/index.ts';
import { MAX_BATCH_LINE_CHARS } from '../../sandbox/handlers/batch.ts';
import { buildRequest, operation } from '../../contract/index.ts';
import { BATCH_HEADER, batchBody, counts, hardeningSandbox, send, signed, storedCard } from './support.ts';

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await hardeningSandbox();
});
afterAll(() => sb.close());

/** A body past the cap, in one of the shapes that reach it: flat unknown fields, a long list, nested objects. */
const pastTheCap = fc.record({
  shape: fc.constantFrom('fields', 'list', 'nested'),
  over: fc.integer({ min: 1, max: 3 * MAX_FIELDS }),
  method: fc.constantFrom('processBatch', 'processCard', 'refundCard', 'nonsense'),
});

function bodyOf({ shape, over, method }: { shape: string; over: number; method: string }) {
  const n = MAX_FIELDS + over + 1;
  const body: Record<string, unknown> = { method, merchantUUID: 'nobody', apiKey: 'x' };
  if (shape === 'fields') for (let i = 0; i < n; i++) body[`f${i}`] = i % 2 ? 'x' : 0;
  else if (shape === 'list') body.items = Array.from({ length: n }, (_, i) => i);
  else body.deep = Array.from({ length: Math.ceil(n / 3) }, () => ({ a: 1, b: '2', c: [] }));
  return body;
}

describe('a body past MAX_FIELDS fields and list items', () => {
  it('is refused by the JSON reader before JSON.parse is called', () => {
    fc.assert(
      fc.property(pastTheCap, (c) => {
        const text = JSON.stringify(bodyOf(c));
        const parse = vi.spyOn(JSON, 'parse');
        try {
          expect(parseJson(text)).toEqual({ body: TOO_MANY_FIELDS });
          expect(parse).not.toHaveBeenCalled();
        } finally {
          parse.mockRestore();
        }
      }),
      { numRuns: 12, seed: 39 },
    );
  });

  it('is refused by the form reader before any name or value is decoded', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 * MAX_FIELDS }), fc.boolean(), (over, escaped) => {
        const pairs = Array.from({ length: MAX_FIELDS + over }, (_, i) => `f${i}=${escaped ? '%41' : 'x'}`);
        const decode = vi.spyOn(globalThis, 'decodeURIComponent');
        try {
          expect(readForm(pairs.join('&'))).toEqual({ body: TOO_MANY_FIELDS });
          expect(decode).not.toHaveBeenCalled();
        } finally {
          decode.mockRestore();
        }
      }),
      { numRuns: 12, seed: 39 },
    );
  });

  it('leaves a body at the cap, and commas inside strings, to the ordinary checks', () => {
    const atCap = Object.fromEntries(Array.from({ length: MAX_FIELDS }, (_, i) => [`f${i}`, 0]));
    expect(parseJson(JSON.stringify(atCap))).toHaveProperty('ok');
    const commas = { method: 'processCard', note: ','.repeat(4 * MAX_FIELDS) };
    expect(parseJson(JSON.stringify(commas))).toEqual({ ok: commas });
    const form = Array.from({ length: MAX_FIELDS }, (_, i) => `f${i}=x`).join('&&');
    expect(readForm(form)).toHaveProperty('ok');
  });

  it("is refused by the sandbox in the caller's wire format, -2 naming the rule, nothing stored", async () => {
    const before = await counts(sb);
    for (const [shape, method] of [
      ['fields', 'processBatch'],
      ['list', 'processBatch'],
      ['nested', 'processCard'],
    ] as const) {
      const body = bodyOf({ shape, over: MAX_FIELDS, method });
      const json = await send(sb, {
        ...buildRequest(operation(method), { body: { method } }),
        body: JSON.stringify(body),
      });
      expect(json.json).toEqual({
        responseCode: '-2',
        responseMessage: `The request body ${TOO_MANY_FIELDS}`,
      });
      const form = new URLSearchParams(
        Object.entries(body).map(([k, v]) => [k, String(v)] as [string, string]),
      ).toString();
      const formAnswer = await send(sb, {
        ...buildRequest(operation(method), { body: { method } }),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body:
          shape === 'fields'
            ? form
            : `${form}&${Array.from({ length: MAX_FIELDS + 1 }, (_, i) => `g${i}=1`).join('&')}`,
      });
      expect(String(formAnswer.response.body)).toContain('<responseCode>-2</responseCode>');
      expect(String(formAnswer.response.body)).toContain(TOO_MANY_FIELDS);
    }
    expect(await counts(sb)).toEqual(before);
  });
});

describe('a batch line longer than MAX_BATCH_LINE_CHARS', () => {
  it('refuses the file before it is parsed, naming the line; nothing stored', async () => {
    const card = await storedCard(sb);
    const before = await counts(sb);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: MAX_BATCH_LINE_CHARS + 1, max: 8 * MAX_BATCH_LINE_CHARS }),
        fc.constantFrom('transactionProduct', 'transactionReferenceID', 'cardKey'),
        async (at, length, column) => {
          const line = (i: number) => {
            const fields: Record<string, string> = {
              transactionReferenceID: `B-${i}`,
              transactionAmount: '10.00',
              transactionCurrency: 'AUD',
              transactionProduct: 'Batch',
              cardID: card.cardID,
              cardKey: card.cardKey,
            };
            if (i === at) fields[column] = 'P'.repeat(length);
            return BATCH_HEADER.split(',')
              .map((c) => fields[c])
              .join(',');
          };
          const csv = `${BATCH_HEADER}\n${Array.from({ length: 5 }, (_, i) => line(i + 1)).join('\n')}\n`;
          const answer = await send(sb, signed('processBatch', batchBody(csv)));
          expect(answer.json).toEqual({
            responseCode: '-2',
            responseMessage: `Field 'batchFile' is invalid: line ${at} must not be longer than ${MAX_BATCH_LINE_CHARS} characters`,
          });
        },
      ),
      { numRuns: 10, seed: 39 },
    );
    expect(await counts(sb)).toEqual(before);
  });

  it('takes a batch whose lines are all within it', async () => {
    const card = await storedCard(sb);
    const csv = `${BATCH_HEADER}\nB-1,10.00,AUD,${'P'.repeat(30)},${card.cardID},${card.cardKey}\n`;
    const answer = await send(sb, signed('processBatch', batchBody(csv)));
    expect(answer.json.responseCode).toBe('0');
  });
});

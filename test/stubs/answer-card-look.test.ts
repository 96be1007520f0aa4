// The stubs' quick look at a JSON answer for card numbers (runtime/card-numbers.ts
// jsonCannotHoldCardNumber, through the JSON protocol's cannotHoldCardNumber): when it rules the text
// out, reading the answer value by value (cardNumberPath, which the stubs then skip) must find
// nothing. Checked on answers that hold card numbers in every disguise, dates and timestamps, digits
// of other scripts, escapes and long numbers; and through the gateway, an answer holding one is
// still never sent.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { protocols } from '../../generated/protocols.ts';
import { cardNumberPath, jsonCannotHoldCardNumber } from '../../runtime/card-numbers.ts';
import { cardNumber, disguised } from '../hardening/disguises.ts';
import { createGateway } from '../../server-stubs/index.ts';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';

/** Text as answers hold it: words, dates and times of the gateway's forms, digits and separators, cards. */
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.stringMatching(/^[0-9 :.-]{0,40}$/),
  fc.stringMatching(/^[0-9a-f]{13,64}$/),
  fc
    .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 19).replace('T', ' ')),
  fc
    .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10)),
  cardNumber,
  disguised,
  fc
    .tuple(cardNumber, fc.constantFrom('"', '\\', '\n', '\u0000', '\u00a0'))
    .map(([n, c]) => `${n.slice(0, 6)}${c}${n.slice(6)}`),
);
const leaf = fc.oneof(
  text,
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.maxSafeInteger(),
  fc.boolean(),
  fc.constant(null),
);
const answer = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, tie('object'), fc.array(tie('value'), { maxLength: 4 })),
  object: fc.dictionary(fc.oneof(fc.string(), text), tie('value'), { maxKeys: 6 }),
})).object;

describe("the stubs' quick look at a JSON answer for card numbers", () => {
  it('rules a text out only when no value or key in it holds a card number', () => {
    fc.assert(
      fc.property(answer, (value) => {
        if (jsonCannotHoldCardNumber(JSON.stringify(value))) expect(cardNumberPath(value)).toBeUndefined();
      }),
      { numRuns: 3_000 },
    );
  });

  it('a card number in any disguise, in any value or key, is left to the reading value by value', () => {
    fc.assert(
      fc.property(disguised, fc.constantFrom('value', 'key', 'nested', 'list'), (card, where) => {
        const value =
          where === 'value'
            ? { responseCode: '0', responseMessage: card }
            : where === 'key'
              ? { responseCode: '0', [card]: 'x' }
              : where === 'nested'
                ? { responseCode: '0', payer: { name: card } }
                : { responseCode: '0', items: ['a', card] };
        expect(jsonCannotHoldCardNumber(JSON.stringify(value))).toBe(false);
      }),
      { numRuns: 5_000 },
    );
  });

  it("rules out the gateway's answers: dates, timestamps, amounts and references side by side", () => {
    const typical = {
      responseCode: '0',
      responseMessage: 'Approved',
      transactionID: '1163285',
      receiptNumber: '60512489',
      settlementDate: '2026-11-28',
      transactionDate: '2026-11-27 16:25:01',
      amount: 1234567.89,
      paymentCardNumber: '456471XXXXXX0004',
    };
    expect(jsonCannotHoldCardNumber(JSON.stringify(typical))).toBe(true);
    expect(protocols.canonical.cannotHoldCardNumber?.(JSON.stringify(typical))).toBe(true);
    // Numbers outside strings are counted together: joined, they may be one, so they are read one by one.
    expect(jsonCannotHoldCardNumber(JSON.stringify({ a: [4564710, 4564710] }))).toBe(false);
  });

  it('an answer holding a card number is still never sent by the stubs', async () => {
    const op = operation('processCard');
    const gateway = createGateway({
      handlers: echoHandlers(undefined, (o, result) =>
        o.operationId === op.operationId ? { ...result, responseMessage: 'ok 4564 7100 0000 0004' } : result,
      ),
      accounts,
      responseValidation: 'log',
      logger: false,
    });
    const r = buildRequest(op, { body: requestExamples(op)[0]!.value });
    const response = await gateway.handle({
      verb: r.verb,
      url: r.url,
      headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k.toLowerCase(), String(v)])),
      body: r.body as string,
    });
    expect(response.status).toBe(500);
    expect(String(response.body)).not.toContain('7100 0000');
  });
});

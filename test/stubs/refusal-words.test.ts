// Refusals in words a person reads: every pattern, format and long enumeration the spec uses has its
// words (x-expected, with an example), and a refusal of a value that breaks one says those words,
// never the regular expression; the field and the rule stay machine-readable beside the message.
import type { ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { breaking, buildRequest, requestExamples } from '../../contract/index.ts';
import { operations } from '../../generated/operations.ts';
import { expectedValues } from '../../generated/spec-constants.ts';
import { expectedWords, ruleUses } from '../../scripts/lib/expected.ts';
import { NUL_RULE, refusalFor, ruleWords } from '../../server-stubs/core/refusals.ts';
import { createGateway } from '../../server-stubs/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';
import { doc } from '../support/contract.ts';

const uses = ruleUses(doc);
const patterns = [...new Set(uses.filter((u) => u.key.startsWith('pattern:')).map((u) => u.key.slice(8)))];
/** A message shows a regular expression when it holds a pattern of the spec, or the pieces patterns are made of. */
const showsRegex = (message: string) =>
  patterns.some((p) => message.includes(p)) || /must match|\[0-9\]|\{\d+,?\d*\}|\^\(|\)\$/.test(message);

describe('the words of every pattern, format and long enumeration (x-expected)', () => {
  it('are declared once for each rule the spec uses, and say what is wanted with an example or a link', () => {
    expect(uses.length).toBeGreaterThan(40);
    const words = expectedWords(doc);
    expect(Object.keys(words).sort()).toEqual([...new Set(uses.map((u) => u.key))].sort());
    for (const [key, text] of Object.entries(words)) {
      expect(text, key).toMatch(/for example|https:\/\//);
      expect(showsRegex(text), `${key}: ${text}`).toBe(false);
    }
    // The generated table is what the spec declares now.
    expect(expectedValues).toEqual(words);
  });

  it('are what a refusal says for each of them: field and rule machine-readable, no regular expression', () => {
    for (const use of uses) {
      const [keyword, value] = [use.key.slice(0, use.key.indexOf(':')), use.key.slice(use.key.indexOf(':') + 1)];
      const params =
        keyword === 'pattern'
          ? { pattern: value }
          : keyword === 'format'
            ? { format: value }
            : { allowedValues: value.split(',') };
      const error = { keyword, params, instancePath: '/someField', schemaPath: use.pointer } as ErrorObject;
      const refusal = refusalFor([error]);
      expect(refusal).toMatchObject({ code: -2, field: 'someField', rule: keyword });
      expect(refusal.message).toBe(`Field 'someField' is invalid: must be ${expectedValues[use.key]}`);
    }
  });
});

describe('refusals of the gateway', () => {
  const gateway = createGateway({ handlers: echoHandlers(), accounts, logger: false });
  const refuse = async (operationId: string, change: Record<string, unknown>) => {
    const op = operations.find((o) => o.operationId === operationId)!;
    const body = { ...requestExamples(op)[0]!.value, ...change };
    const response = await gateway.handle(buildRequest(op, { body }));
    return JSON.parse(String(response.body)) as { responseCode: string; responseMessage: string };
  };

  it('say the expiry wanted, not its regular expression (the issue: 02/29)', async () => {
    expect(await refuse('processCard', { paymentCardExpiry: '02/29' })).toEqual({
      responseCode: '-2',
      responseMessage: "Field 'paymentCardExpiry' is invalid: must be MMYY, for example 0229",
    });
  });

  it('name the standard of a long list and link it (currencies), list a short one', async () => {
    const currency = await refuse('processCard', { transactionCurrency: 'XYZ' });
    expect(currency.responseMessage).toBe(
      "Field 'transactionCurrency' is invalid: must be an ISO 4217 currency code, for example AUD (the list is ISO's, https://www.iso.org/iso-4217-currency-codes.html)",
    );
    const country = await refuse('processCard', { customerCountry: 'XX' });
    expect(country.responseMessage).toContain('must be an ISO 3166-1 alpha-2 country code, for example AU, or empty');
    expect((await refuse('processCard', { recurringFlag: '7' })).responseMessage).toBe(
      "Field 'recurringFlag' is invalid: must be one of 0, 1",
    );
  });

  it("say a limit as the rule with the field, never in Ajv's words (the issue: must NOT have more than 64 characters)", async () => {
    const tooLong = 'A'.repeat(65);
    expect(await refuse('processCard', { transactionReferenceID: tooLong })).toMatchObject({
      responseCode: '-2',
      responseMessage: expect.stringMatching(
        /^Field 'transactionReferenceID' is invalid: must be at most \d+ characters$/,
      ),
    });
    // Every keyword Ajv can report for a value, each in words.
    const limits: [string, Record<string, unknown>, string][] = [
      ['maxLength', { limit: 64 }, 'must be at most 64 characters'],
      ['minLength', { limit: 1 }, 'must be at least 1 character'],
      ['maximum', { limit: 99 }, 'must be at most 99'],
      ['minimum', { limit: 1 }, 'must be at least 1'],
      ['exclusiveMinimum', { limit: 0 }, 'must be more than 0'],
      ['exclusiveMaximum', { limit: 5 }, 'must be less than 5'],
      ['multipleOf', { multipleOf: 0.01 }, 'must be a multiple of 0.01'],
      ['maxItems', { limit: 500 }, 'must have at most 500 items'],
      ['minItems', { limit: 1 }, 'must have at least 1 item'],
      ['uniqueItems', { i: 1, j: 0 }, 'must not list an item twice'],
      ['type', { type: 'integer' }, 'must be a whole number'],
      ['type', { type: 'string' }, 'must be a string'],
    ];
    for (const [keyword, params, words] of limits) {
      const refusal = refusalFor([{ keyword, params, instancePath: '/f', schemaPath: '#' } as ErrorObject]);
      expect(refusal.message, keyword).toBe(`Field 'f' is invalid: ${words}`);
      expect(refusal.message).not.toMatch(/must NOT|must be [<>]=?|must be (string|integer|number)$/);
    }
  });

  it('never show a regular expression: every field of every example broken in turn', async () => {
    let broken = 0;
    for (const op of operations.filter((o) => o.request)) {
      const example = requestExamples(op)[0]!.value;
      const schema = doc.components.schemas[op.forms?.[0] ?? op.request!];
      for (const field of Object.keys(example)) {
        const bad = breaking(schema.properties?.[field]);
        if (bad !== '!!' && bad !== 'not-an-allowed-value') continue;
        const response = await gateway.handle(buildRequest(op, { body: { ...example, [field]: bad } }));
        const { responseMessage } = JSON.parse(String(response.body)) as { responseMessage: string };
        expect(showsRegex(responseMessage), `${op.operationId}.${field}: ${responseMessage}`).toBe(false);
        broken++;
      }
    }
    expect(broken).toBeGreaterThan(100);
  });
});

describe('a rule in the words of a catalogue message', () => {
  it("is what follows the field's name; a message of another form stops the package loading, naming the entry", () => {
    expect(NUL_RULE).toBe('holds a NUL character');
    expect(ruleWords('nul', "{kind} '{field}' is invalid: holds a NUL byte")).toBe('holds a NUL byte');
    expect(() => ruleWords('nul', "{kind} '{field}' must not hold a NUL")).toThrow(
      /spec\/refusals\.yaml: the nul refusal's message no longer reads/,
    );
    expect(() => ruleWords('nul', "{kind} '{field}' is invalid: holds {what}")).toThrow(/the nul refusal/);
  });
});

// Findings: duplicate JSON keys silently took the last value (a signed field could be shadowed by a
// second copy); a number written 1e309 became Infinity and passed every check but a maximum.
import { describe, expect, it } from 'vitest';
import { findDuplicateKey, parseJson } from '../../runtime/protocols/json.ts';
import { hardeningSandbox, purchase, send, signed } from './support.ts';

const sb = await hardeningSandbox();

describe('request bodies as JSON', () => {
  it('a key sent twice is refused with -2 naming it, at any depth', async () => {
    const request = signed('processCard', purchase());
    const text = String(request.body).replace(
      '"transactionAmount":"10.00"',
      '"transactionAmount":"10.00","transactionAmount":"99999.00"',
    );
    const answer = await send(sb, { ...request, body: text });
    expect(answer.json).toEqual({
      responseCode: '-2',
      responseMessage: "Field 'transactionAmount' is invalid: is sent more than once",
    });
    expect(findDuplicateKey('{"a":[{"b":1},{"c":{"d":1,"e":"\\":","d":2}}]}')).toBe('a[1].c.d');
    expect(findDuplicateKey('{"a":"\\"b\\":1","b":2,"c":{"b":3}}')).toBeUndefined();
    expect(findDuplicateKey('{"a\\\\":1,"a\\u005c":2}')).toBe('a\\');
  });

  it('a number no double can hold is refused with -2 naming it', () => {
    expect(parseJson('{"a":{"b":[1,1e309]}}')).toEqual({ field: 'a.b[1]', rule: 'must be a finite number' });
    expect(parseJson(`{"n":-${'9'.repeat(400)}}`)).toEqual({ field: 'n', rule: 'must be a finite number' });
    expect(parseJson('{"n":1e-400,"s":"1e309"}')).toEqual({ ok: { n: 0, s: '1e309' } });
  });
});

describe('deep bodies', () => {
  it('a large body nested deeper than the contract ever nests is refused before it is parsed', async () => {
    const { gateway } = sb;
    const { buildRequest, operation } = await import('../../contract/index.ts');
    const depth = 4 * 1024 * 1024;
    const body = `{"method":"processBatch","x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const request = { ...buildRequest(operation('processBatch'), { body: {} }), body };
    const response = await gateway.handle(request);
    expect(JSON.parse(String(response.body))).toEqual({
      responseCode: '-2',
      responseMessage: 'The request body nests deeper than 32 levels',
    });
  });

  it('finds depth outside strings only', async () => {
    const { nestsDeeperThan } = await import('../../runtime/protocols/json.ts');
    expect(nestsDeeperThan(`{"a":"${'['.repeat(100)}\\"${'{'.repeat(100)}"}`, 2)).toBe(false);
    expect(nestsDeeperThan('{"a":[[[1]]]}', 3)).toBe(true);
  });
});

describe('deep bodies of every size', () => {
  // Finding: the depth scan ran only above 64 KiB; a 40 KB body of `[` reached code that recurses,
  // before any credential was checked, and was answered HTTP 500.
  it('any body nesting deeper than 32 levels is refused -2 before credentials, on every operation', async () => {
    const fc = (await import('fast-check')).default;
    const { buildRequest, operation } = await import('../../contract/index.ts');
    const { operations } = await import('../../generated/operations.ts');
    const ops = Object.values(operations).map((o) => o.operationId);
    const opener = fc.constantFrom('[', '{"a":', '[{"b":', '{"c":[');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ops),
        fc.array(opener, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 33, max: 30_000 }),
        fc.constantFrom('field', 'unknown'),
        async (operationId, openers, depth, where) => {
          const op = operation(operationId);
          const open = Array.from({ length: depth }, (_, i) => openers[i % openers.length]!).join('');
          const close = [...open]
            .filter((c) => c === '[' || c === '{')
            .reverse()
            .map((c) => (c === '[' ? ']' : '}'))
            .join('');
          const name = where === 'field' && op.fields?.length ? op.fields[0] : 'zz';
          const body = `{"method":${JSON.stringify(op.method)},"${name}":${open}1${close}}`;
          const base = buildRequest(op, { body: {} });
          const answer = await send(sb, { ...base, body });
          expect(answer.status).toBeLessThan(500);
          expect(answer.json.responseMessage).toBe('The request body nests deeper than 32 levels');
        },
      ),
      { seed: 2811, numRuns: 150 },
    );
  });
});

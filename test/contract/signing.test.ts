// The recipe runtime against independent implementations of the public recipes, written the way
// the public clients write them (node:crypto, string concatenation).
import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as recipes from '../../runtime/recipe-hashes.ts';
import * as signing from '../../runtime/signing.ts';
import {
  canonicalJson,
  canonicalParameters,
  computeHash,
  hashesEqual,
  hashPreimage,
  legacyRecipe,
} from '../../runtime/signing.ts';
import { hashRecipes } from '../../generated/hash-recipes.ts';
import { doc } from '../support/contract.ts';

const md5 = (s: string | Buffer) => createHash('md5').update(s).digest('hex');
const P = (passphrase: string) => md5(passphrase);

describe('hash recipes, computed by runtime/signing.ts', () => {
  const pass = 'S0me Passphrase!';
  const tx = { merchantUUID: '5265F8EED6A19', transactionAmount: '10.00', transactionCurrency: 'AUD' };

  it('transaction: md5(lower(P + merchantUUID + transactionAmount + transactionCurrency))', () => {
    expect(computeHash(hashRecipes.transaction, pass, tx)).toBe(
      md5((P(pass) + tx.merchantUUID + tx.transactionAmount + tx.transactionCurrency).toLowerCase()),
    );
  });

  it('query: the first of transactionID, transactionReferenceID, batchUUID', () => {
    const q = { merchantUUID: 'm1', transactionReferenceID: 'REF-9' };
    expect(computeHash(hashRecipes.query, pass, q)).toBe(md5((P(pass) + 'm1' + 'REF-9').toLowerCase()));
    expect(computeHash(hashRecipes.query, pass, { ...q, transactionID: 'TX-1' })).toBe(
      md5((P(pass) + 'm1' + 'TX-1').toLowerCase()),
    );
  });

  it('settlement: md5(P + lower(merchantUUID) + settlementFrom + settlementTo), nothing else lowercased', () => {
    const s = { merchantUUID: 'ABC', settlementFrom: '2026-11-01', settlementTo: '2026-11-30' };
    expect(computeHash(hashRecipes.settlement, 'PassPhrase', s)).toBe(
      md5(P('PassPhrase') + 'abc' + s.settlementFrom + s.settlementTo),
    );
  });

  // ActiveMerchant's #verification_hash and #void_verification_hash, as it writes them.
  it('legacy forms: the passphrase unhashed, as ActiveMerchant signs; each legacy example reproduces', () => {
    const am = (...parts: string[]) => md5(parts.join('').toLowerCase());
    expect(computeHash(legacyRecipe(hashRecipes.transaction)!, pass, tx)).toBe(
      am(pass, tx.merchantUUID, tx.transactionAmount, tx.transactionCurrency),
    );
    expect(computeHash(legacyRecipe(hashRecipes.query)!, pass, { merchantUUID: 'M', transactionID: 'TX-1' })).toBe(
      am(pass, 'M', 'TX-1'),
    );
    const withLegacy = Object.entries(hashRecipes).filter(([, recipe]) => 'legacy' in recipe);
    expect(withLegacy.map(([name]) => name).sort()).toEqual(['query', 'transaction']);
    for (const [name, recipe] of withLegacy) {
      const { example } = doc['x-hash-recipes'][name]!.legacy as {
        example: { passphrase: string; fields: Record<string, string>; hash: string };
      };
      expect(computeHash(legacyRecipe(recipe)!, example.passphrase, example.fields)).toBe(example.hash);
    }
    expect(legacyRecipe(hashRecipes.settlement)).toBeUndefined();
  });

  // OpenCart's extension, on the redirect to returnURL: md5(lower(md5(pp) + hashSalt + uuid + status + reference)).
  it("return: over the redirect's reference as over the notification's transactionID", () => {
    const opencart = md5((P(pass) + 's4lt' + 'M' + 'approved' + 'TX-9').toLowerCase());
    expect(
      computeHash(hashRecipes.return, pass, {
        hashSalt: 's4lt',
        merchantUUID: 'M',
        status: 'approved',
        reference: 'TX-9',
      }),
    ).toBe(opencart);
    expect(
      computeHash(hashRecipes.return, pass, {
        hashSalt: 's4lt',
        merchantUUID: 'M',
        status: 'approved',
        transactionID: 'TX-9',
      }),
    ).toBe(opencart);
  });

  it('custom: empty custom fields ([] or absent) count as empty strings', () => {
    const r = { merchantUUID: 'M', custom1: 'Order 1', custom2: [], custom3: undefined };
    expect(computeHash(hashRecipes.custom, pass, r)).toBe(md5((P(pass) + 'M' + 'Order 1').toLowerCase()));
  });

  // easylodge/merchant_warrior: fileHash = Digest::MD5.hexdigest(zip file contents).
  it('batchFile: md5 of the decoded file bytes alone, as a public client computes it', () => {
    const bytes = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0xff, 0x00]);
    const f = { merchantUUID: 'M', batchFile: bytes.toString('base64') };
    expect(computeHash(hashRecipes.batchFile, pass, f)).toBe(md5(bytes));
  });

  it('canonical-parameters: path, then query, then body fields, a later name replacing an earlier one', () => {
    const signed = canonicalParameters({
      params: { id: 'p', a: 'path' },
      query: { a: 'query', q: 'x' },
      body: { a: 'body', amount: 5 },
    });
    const canonical = '{"a":"body","amount":5,"id":"p","q":"x"}';
    expect(hashPreimage(hashRecipes.message, pass, signed)).toBe(canonical);
    expect(computeHash(hashRecipes.message, pass, signed)).toBe(
      createHmac('sha256', pass).update(canonical).digest('hex'),
    );
    // A GET with no body signs its parameters alone.
    expect(hashPreimage(hashRecipes.message, pass, canonicalParameters({ params: { id: 'p' } }))).toBe('{"id":"p"}');
  });

  it('canonical JSON of any JSON value: keys sorted at every level, no white space, strings escaped', () => {
    // The plainest statement of the rule, against which the optimised serialiser is held.
    const reference = (v: unknown): string =>
      Array.isArray(v)
        ? `[${v.map(reference).join(',')}]`
        : v !== null && typeof v === 'object'
          ? `{${Object.keys(v)
              .sort()
              .map((k) => `${JSON.stringify(k)}:${reference((v as Record<string, unknown>)[k])}`)
              .join(',')}}`
          : JSON.stringify(v);
    fc.assert(
      fc.property(fc.jsonValue(), (value) => canonicalJson(value) === reference(value)),
      { numRuns: 500 },
    );
    expect(canonicalJson({ b: 1, a: { d: 'x"y', c: [{ f: 1, e: 2 }] }, '10': 0, '9': 0 })).toBe(
      '{"10":0,"9":0,"a":{"c":[{"e":2,"f":1}],"d":"x\\"y"},"b":1}',
    );
  });

  it('message: HMAC-SHA256 over the parameters as canonical JSON, keys sorted at every level', () => {
    const params = { z: 1, agreementIdentification: 'A', payer: { name: 'N', address: 'X' } };
    const canonical = '{"agreementIdentification":"A","payer":{"address":"X","name":"N"},"z":1}';
    expect(canonicalJson(params)).toBe(canonical);
    expect(hashPreimage(hashRecipes.message, pass, params)).toBe(canonical);
    expect(computeHash(hashRecipes.message, pass, params)).toBe(
      createHmac('sha256', pass).update(canonical).digest('hex'),
    );
  });

  it('a list of records hashes as the records merged, the first holding a name winning', () => {
    const request = { merchantUUID: 'M', custom1: 'from the request', custom2: 'two', customHash: 'x' };
    const result = { custom1: 'Order 1', custom2: undefined, responseCode: '0' };
    const merged = { ...request, ...result, customHash: undefined };
    const layers = [{ customHash: undefined }, result, request];
    expect(computeHash(hashRecipes.custom, pass, layers)).toBe(computeHash(hashRecipes.custom, pass, merged));
    expect(hashPreimage(hashRecipes.custom, pass, layers)).toContain('order 1');
    expect(hashPreimage(hashRecipes.custom, pass, layers)).not.toContain('two');
    expect(computeHash(hashRecipes.message, pass, layers)).toBe(computeHash(hashRecipes.message, pass, merged));
    expect(hashPreimage(hashRecipes.message, pass, [{}, { b: 2 }, {}])).toBe('{"b":2}');
  });

  it('hashesEqual compares case-insensitively and rejects any difference', () => {
    expect(hashesEqual('ABCDEF', 'abcdef')).toBe(true);
    expect(hashesEqual('abcdef', 'abcdee')).toBe(false);
    expect(hashesEqual('abcdef', 'abcde')).toBe(false);
  });
});

describe('the server digests (node:crypto) agree with the portable ones', async () => {
  const { nodeDigests } = await import('../../server-stubs/index.ts');
  const { portableDigests } = await import('../../runtime/signing.ts');
  it('md5 and HMAC-SHA256, with short, long (over one block) and non-ASCII keys and messages', () => {
    for (const key of ['', 'k', 'sandbox-passphrase', 'x'.repeat(64), 'y'.repeat(200), 'clé secrète ✓']) {
      for (const message of ['', '{"a":1}', 'z'.repeat(1000), 'ünïcödé ✓']) {
        expect(nodeDigests.hmacSha256Hex(key, message)).toBe(portableDigests.hmacSha256Hex(key, message));
        expect(nodeDigests.hmacSha256Hex(key, message)).toBe(createHmac('sha256', key).update(message).digest('hex'));
        expect(nodeDigests.md5Hex(message)).toBe(portableDigests.md5Hex(message));
      }
    }
  });
});

// runtime/signing.ts writes each defaulting function's parameters again (a default cannot be added to
// a type): tsc holds them to recipe-hashes.ts's, digests aside, here (test/contract/types.test.ts runs it).
describe("signing.ts's defaulting functions take recipe-hashes.ts's parameters, the digests optional", () => {
  it('has the same parameters and result for each of the six', () => {
    /** A function's parameters, each required, and its result. */
    type Shape<F extends (...args: never[]) => unknown> = [Required<Parameters<F>>, ReturnType<F>];
    expectTypeOf<Shape<typeof signing.hashPreimage>>().toEqualTypeOf<Shape<typeof recipes.hashPreimage>>();
    expectTypeOf<Shape<typeof signing.redactedPreimage>>().toEqualTypeOf<Shape<typeof recipes.redactedPreimage>>();
    expectTypeOf<Shape<typeof signing.computeHash>>().toEqualTypeOf<Shape<typeof recipes.computeHash>>();
    expectTypeOf<Shape<typeof signing.messageHash>>().toEqualTypeOf<Shape<typeof recipes.messageHash>>();
    expectTypeOf<Shape<typeof signing.signHeaders>>().toEqualTypeOf<Shape<typeof recipes.signHeaders>>();
    expectTypeOf<Shape<typeof signing.signBodyHashes>>().toEqualTypeOf<Shape<typeof recipes.signBodyHashes>>();
    // And the digests may be left out: the portable ones are taken.
    expect(signing.computeHash(hashRecipes.transaction!, 'p', {})).toBe(
      recipes.computeHash(hashRecipes.transaction!, 'p', {}, signing.portableDigests),
    );
  });
});

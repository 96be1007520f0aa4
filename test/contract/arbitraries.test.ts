// The suite's property-based values (contract/arbitraries.ts): a `format: uri` field draws absolute
// http(s) URLs that the contract's own Url schema takes, the same ones from the same seed; and an
// arbitrary of a kind of string is built once, not per check (building fast-check's string
// arbitraries cost a suite run about a second when each check built its own).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arbitraryFor } from '../../contract/arbitraries.ts';
import { doc, validatorFor } from '../support/contract.ts';

const url = { $ref: '#/components/schemas/Url' };

describe('the suite’s arbitraries', () => {
  it('draws absolute http(s) URLs for format uri that the contract’s Url schema takes, the same from the same seed', () => {
    const takes = validatorFor('#/components/schemas/Url');
    const drawn = fc.sample(arbitraryFor(doc, url), { numRuns: 500, seed: 44 }) as string[];
    expect(drawn.filter((v) => !takes(v))).toEqual([]);
    expect(drawn.filter((v) => !['http:', 'https:'].includes(new URL(v).protocol))).toEqual([]);
    // Paths and percent-encodings are drawn, not only bare hosts.
    expect(drawn.some((v) => /^https?:\/\/[^/]+\/.*%[0-9A-F]{2}/.test(v))).toBe(true);
    expect(fc.sample(arbitraryFor(doc, url), { numRuns: 500, seed: 44 })).toEqual(drawn);
  });

  it('builds one arbitrary per kind of string, whichever schema object asks for it', () => {
    const pattern = { type: 'string', pattern: '^[0-9]{4}$' };
    expect(arbitraryFor(doc, { ...pattern })).toBe(arbitraryFor(doc, { ...pattern }));
    expect(arbitraryFor(doc, url)).toBe(arbitraryFor(doc, { ...url }));
    expect(arbitraryFor(doc, { ...pattern, maxLength: 3 })).not.toBe(arbitraryFor(doc, pattern));
  });
});

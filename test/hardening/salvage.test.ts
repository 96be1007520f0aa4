// Finding (review of 52c133d): the request log looked for the account of a JSON body the strict
// reader had refused with a full JSON.parse of it, so a 1 MB body nested too deep, refused in 2 ms
// without a parse, was then parsed (250 ms, ~120 MB) on the main thread to name its account. And the
// two salvages disagreed on a field sent twice (form: its first value, JSON: its last). Now JSON's
// salvage scans the text once, decoding only the values of the credential fields, and both keep the
// first. Work is counted (JSON.parse's calls and what they were given), never timed.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { protocols } from '../../generated/protocols.ts';

const json = protocols.byId('json')!;
const form = protocols.byId('form')!;
const NAMES = ['merchantUUID', 'partnerUUID', 'apiKey', 'accessToken'];

afterEach(() => vi.restoreAllMocks());

describe("the salvage of a refused body's credentials", () => {
  it('a JSON body refused for nesting too deep is not parsed to find its account', () => {
    const n = 100_000;
    const body = `{"merchantUUID":"m1","apiKey":"k1","custom1":${'['.repeat(n)}${']'.repeat(n)}}`;
    expect(json.read(body)).toHaveProperty('unreadable');
    const parse = vi.spyOn(JSON, 'parse');
    expect(json.salvage!(body, NAMES)).toEqual({ merchantUUID: 'm1', apiKey: 'k1' });
    // Before, JSON.parse was given the whole body (200 kB here).
    expect(Math.max(0, ...parse.mock.calls.map(([text]) => String(text).length))).toBeLessThan(100);
  });

  it('a credential after a deep or long part is still found, by one pass over the text', () => {
    const body = `{"custom1":${'['.repeat(50)}"apiKey"${']'.repeat(50)},"custom2":"\\"apiKey\\":\\"no\\"","merchantUUID":"m1","apiKey":"k1"}`;
    expect(json.salvage!(body, NAMES)).toEqual({ merchantUUID: 'm1', apiKey: 'k1' });
  });

  it('JSON and form keep the same value of a field sent twice: the first', () => {
    expect(json.salvage!('{"apiKey":"a","merchantUUID":"m1","apiKey":"b"}', NAMES)).toEqual({
      apiKey: 'a',
      merchantUUID: 'm1',
    });
    expect(form.salvage!('apiKey=a&merchantUUID=m1&apiKey=b', NAMES)).toEqual({ apiKey: 'a', merchantUUID: 'm1' });
  });

  it('only top-level strings are taken, escapes read as JSON reads them', () => {
    expect(json.salvage!('{"x":{"apiKey":"nested"},"api\\u004bey":"k\\u0021","merchantUUID":7}', NAMES)).toEqual({
      apiKey: 'k!',
    });
    expect(json.salvage!('["apiKey","k"]', NAMES)).toBeUndefined();
    expect(json.salvage!('not json', NAMES)).toBeUndefined();
  });
});

// The stubs' shortcuts in reading a request's target, held to what they stand for: a query string with
// nothing to decode is split by hand, and must read as URLSearchParams reads it (every other query
// string goes through URLSearchParams itself); a path parameter without `%` is taken as sent, as
// decodeURIComponent would answer it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { operation } from '../../contract/index.ts';
import { refusals } from '../../server-stubs/core/refusals.ts';
import { queryOf } from '../../server-stubs/core/request.ts';
import { route } from '../../server-stubs/core/router.ts';

const op = operation('searchPayToPayments');
const known = op.parameters.filter((p) => p.in === 'query').map((p) => p.name);

/** What URLSearchParams makes of a query string, as queryOf answers it. */
function byUrlSearchParams(search: string): unknown {
  const query: Record<string, string> = {};
  if (!search) return { ok: query };
  for (const [name, value] of new URLSearchParams(search)) {
    if (!known.includes(name)) return { refusal: refusals.parameterNotAllowed(name) };
    query[name] = value;
  }
  return { ok: query };
}

const piece = fc.oneof(
  fc.constantFrom(...known, 'colour', '__proto__', ''),
  fc.constantFrom('=', '&', '&&', '?', '+', '%', '%20', '%4', '%zz', ' ', '#', ';', 'é', '\u{1f600}', '\ud800'),
  fc.string({ maxLength: 4 }),
);
const search = fc.array(piece, { maxLength: 10 }).map((parts) => parts.join(''));

describe('reading the query string and the path parameters', () => {
  it('a query string reads as URLSearchParams reads it, with or without anything to decode', () => {
    fc.assert(
      fc.property(search, (text) => {
        expect(queryOf(op, text)).toEqual(byUrlSearchParams(text));
      }),
      { numRuns: 5_000 },
    );
    for (const text of ['status=approved', 'status=approved&status=declined', '&status=&', 'status', '?status=x'])
      expect(queryOf(op, text)).toEqual(byUrlSearchParams(text));
  });

  it('a path parameter is decoded only where it holds an escape, and a broken escape is refused', () => {
    const at = (path: string) => {
      const found = route('GET', path);
      return 'match' in found ? found.match.params : found.refusal.errorCode;
    };
    expect(at('/npp/payid/jane-1001%40merchant.payid.test')).toEqual({ payId: 'jane-1001@merchant.payid.test' });
    expect(at('/npp/payid/jane+1001@merchant')).toEqual({ payId: 'jane+1001@merchant' });
    expect(at('/npp/payid/jane%zz')).toBe(at('/npp/payid/%E0%A4%A'));
    expect(typeof at('/npp/payid/jane%zz')).toBe('string');
  });
});

// fast-check arbitraries from the contract's own schemas, for property-based requests: every value
// is drawn from the schema and then kept only if the request validator accepts it.
import fc from 'fast-check';
import { deref, type Doc } from '../runtime/document.ts';

const isoDate = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

// An absolute http(s) URL, as fc.webUrl() draws them (a scheme, fc.domain(), a path of segments of
// RFC 3986's segment characters or percent-encoded ones), without fc.webUrl's cost: its percent
// characters are drawn from every code point, and building them maps all 1.1 million once per process
// (about a second of CPU, most of a suite run's own). Percent-encoded here: printable ASCII.
const segment = fc.stringMatching(/^(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[2-7][0-9A-F])*$/);
const webUrl = fc
  .tuple(fc.constantFrom('http', 'https'), fc.domain(), fc.array(segment, { maxLength: 4 }))
  .map(([scheme, domain, segments]) => `${scheme}://${domain}${segments.map((s) => `/${s}`).join('')}`);

// Arbitraries are values (a draw depends only on the arbitrary and the seed), so one is built once per
// kind of string: fast-check's stringMatching and string tokenise a set of strings against each new
// character arbitrary as they are built, which cost a suite run a second when built per check.
const strings = new Map<string, fc.Arbitrary<string>>();

function stringArbitrary(s: any): fc.Arbitrary<string> {
  const key = JSON.stringify([s.pattern, s.format, s.contentEncoding, s.minLength, s.maxLength]);
  let arbitrary = strings.get(key);
  if (!arbitrary) {
    arbitrary = newStringArbitrary(s);
    strings.set(key, arbitrary);
  }
  return arbitrary;
}

function newStringArbitrary(s: any): fc.Arbitrary<string> {
  if (s.pattern)
    return fc
      .stringMatching(new RegExp(s.pattern))
      .filter((v) => (s.maxLength === undefined || v.length <= s.maxLength) && v.length >= (s.minLength ?? 0));
  switch (s.format) {
    case 'email':
      return fc.emailAddress().filter((v) => v.length <= (s.maxLength ?? 254));
    case 'uri':
      return webUrl;
    case 'date':
      return isoDate;
    case 'ipv4':
      return fc.ipV4();
    case 'ipv6':
      return fc.ipV6();
  }
  if (s.contentEncoding === 'base64') return fc.base64String({ minLength: 4, maxLength: 64 });
  const minLength = s.minLength ?? 0;
  return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(s.maxLength ?? 30, 30)) });
}

/** An arbitrary of the values a schema accepts (if/then and not are left to the validator's filter). */
export function arbitraryFor(doc: Doc, schema: any): fc.Arbitrary<unknown> {
  const s = deref(doc, schema);
  if (s === true || s === undefined) return fc.constant(undefined);
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = s.oneOf ?? s.anyOf;
  if (branches && !s.properties) {
    // A branch adds to what the schema around it says ({type: string, anyOf: [{format: email}, {maxLength: 0}]}).
    const { oneOf: _o, anyOf: _a, description: _d, ...around } = s;
    return fc.oneof(...branches.map((b: unknown) => arbitraryFor(doc, { ...around, ...deref(doc, b) })));
  }
  const type = Array.isArray(s.type) ? s.type[0] : (s.type ?? (s.properties ? 'object' : undefined));
  switch (type) {
    case 'string':
      return stringArbitrary(s);
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 100_000 });
    case 'number':
      return fc
        .double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true })
        .map((n) => Math.round(n * 100) / 100);
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(arbitraryFor(doc, s.items ?? {}), {
        minLength: s.minItems ?? 0,
        maxLength: Math.min(s.maxItems ?? 3, 3),
      });
    case 'object': {
      const props = Object.fromEntries(
        Object.entries<any>(s.properties ?? {}).map(([k, v]) => [k, arbitraryFor(doc, v)]),
      );
      return fc.record(props, { requiredKeys: (s.required ?? []).filter((k: string) => k in props) });
    }
    default:
      return fc.anything();
  }
}

/** Up to n values of the schema that the validator accepts, reproducible from the seed. */
export function sampleValid(
  doc: Doc,
  schema: unknown,
  accepts: (v: unknown) => boolean,
  n: number,
  seed: number,
): unknown[] {
  const arbitrary = arbitraryFor(doc, schema).filter((v) => accepts(v));
  try {
    return fc.sample(arbitrary, { numRuns: n, seed });
  } catch {
    return []; // the filter found nothing valid in reasonable time: the check reports it as skipped
  }
}

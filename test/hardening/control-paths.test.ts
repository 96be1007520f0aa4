// Finding: a malformed percent-escape in a control API path (/_sandbox/deliveries/%zz, a lone %, a
// %C3 that starts no UTF-8 character) was answered -4, the internal-error code: the path was decoded
// whole, before any route was chosen, and the decoder's exception was the answer. Each route's path
// parameters are decoded by name now: a malformed one is refused -2 naming the parameter, and no
// path, however spelled, is answered -4 or 5xx.
// Finding: on PostgreSQL a %00 in a path parameter (/payouts/PO-1/transactions/%00/return) reached a
// SQL parameter, which PostgreSQL refuses ("invalid byte sequence for encoding UTF8: 0x00"), and was
// answered -4; SQLite took it and answered properly. A parameter that holds a NUL character is
// refused -2 naming it now, on every store (runtime/nul-text.ts): the property runs on each store the
// tests have (PostgreSQL when PGW_TEST_DATABASE_URL names one).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKIP_PG, STORES, startSandboxOn, type TestSandbox } from '../sandbox/support.ts';

if (STORES.length === 1) it.skip(`control API paths on PostgreSQL: ${SKIP_PG}`, () => {});

describe.each(STORES)('on $name', ({ url }) => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startSandboxOn(url, { control: true });
  });
  afterAll(() => t.close());

  const ROUTES: [verb: string, path: (p: string) => string, parameter: string][] = [
    ['GET', (p) => `/deliveries/${p}`, 'id'],
    ['POST', (p) => `/deliveries/${p}/resend`, 'id'],
    ['POST', (p) => `/payouts/${p}/complete`, 'payoutId'],
    ['POST', (p) => `/payouts/PO-1/transactions/${p}/return`, 'transactionId'],
    ['POST', (p) => `/payouts/${p}/transactions/T-1/return`, 'payoutId'],
    ['POST', (p) => `/direct-debits/${p}/dishonour`, 'transactionID'],
    ['DELETE', (p) => `/merchants/${p}/data`, 'merchantUUID'],
  ];

  /** Path segments with percent-escapes of every kind: good ones, truncated, not hex, not UTF-8. */
  const segment = fc
    .array(
      fc.oneof(
        fc.stringMatching(/^[A-Za-z0-9._~-]{1,6}$/),
        fc.constantFrom('%', '%z', '%zz', '%4', '%C3', '%C3%28', '%E2%82', '%FF', '%00', '%25', '%2F', '%41', '%%41'),
        fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, '0')}`),
      ),
      { minLength: 1, maxLength: 5 },
    )
    .map((parts) => parts.join(''));

  const malformed = (s: string) => {
    try {
      decodeURIComponent(s);
      return false;
    } catch {
      return true;
    }
  };

  async function ask(verb: string, path: string): Promise<{ status: number; body: any }> {
    const { seed } = t.sandbox;
    const response = await fetch(`${t.base}/_sandbox${path}`, {
      method: verb,
      headers: { authorization: `Basic ${btoa(`${seed.merchantUUID}:${seed.apiKey}`)}` },
    });
    return { status: response.status, body: await response.json() };
  }

  describe('control API paths with malformed percent-escapes', () => {
    it('are refused -2 naming the parameter, never answered -4 or 5xx', async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...ROUTES), segment, async ([verb, path, parameter], p) => {
          const { status, body } = await ask(verb, path(p));
          expect(status, p).toBeLessThan(500);
          expect(body.responseCode, `${verb} ${path(p)}: ${JSON.stringify(body)}`).not.toBe(-4);
          if (malformed(p))
            expect(body).toEqual({
              responseCode: -2,
              responseMessage: `Parameter '${parameter}' is invalid: is not correctly percent-encoded (a % starts two hex digits of UTF-8)`,
            });
          else if (decodeURIComponent(p).includes('\u0000'))
            expect(body).toEqual({
              responseCode: -2,
              responseMessage: `Parameter '${parameter}' is invalid: holds a NUL character`,
            });
        }),
        { seed: 3903, numRuns: 300 },
      );
    });

    it('a path no route takes is refused as no operation, whatever its escapes', async () => {
      await fc.assert(
        fc.asyncProperty(segment, async (p) => {
          const { status, body } = await ask('GET', `/nothing/${p}`);
          expect(status).toBe(404);
          expect(body.responseCode).toBe(-2);
        }),
        { seed: 3904, numRuns: 100 },
      );
    });
  });
});

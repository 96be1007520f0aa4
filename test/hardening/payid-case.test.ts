// Finding: one PayID registered several times under case variants (Jane@X.test, jane@x.test...). An
// e-mail PayID is one address whatever its letter case (spec: components/schemas PayId, x-inferred):
// a case variant of a registered PayID is taken, and every lookup by a variant finds it.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { counts, hardeningSandbox, send, signed } from './support.ts';

const sb = await hardeningSandbox();
afterAll(() => sb.close());

const word = fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/);
/** The address with each letter's case chosen by the flags. */
const recased = (address: string, flags: boolean[]) =>
  [...address].map((c, i) => (flags[i % flags.length] ? c.toUpperCase() : c)).join('');

describe('PayIDs are compared as the NPP compares e-mail PayIDs: whatever their letter case', () => {
  it('a case variant of a registered PayID is taken, and finds it', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        word,
        word,
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        async (local, domain, first, second) => {
          const address = `${local}${n++}@${domain}.payid.test`;
          const a = recased(address, first);
          const b = recased(address, second);
          const created = await send(sb, signed('createPayId', { payId: a, name: 'Jane' }));
          expect(created.json.responseCode, created.json.responseMessage).toBe(0);
          expect(created.json.result.payId).toBe(address);
          const before = await counts(sb);
          const again = await send(sb, signed('createPayId', { payId: b, name: 'Jane' }));
          expect(again.json.responseCode, b).toBe(-2);
          expect(await counts(sb)).toEqual(before);
          const found = await send(sb, signed('getPayId', undefined, { params: { payId: b } }));
          expect(found.json.result?.payId, b).toBe(address);
          const listed = await send(sb, signed('listPayIdTransactions', {}, { params: { payId: b } }));
          expect(listed.json.result?.transactions?.length, b).toBe(1);
        },
      ),
      { seed: 2815, numRuns: 60 },
    );
  });
});

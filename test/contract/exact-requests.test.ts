// The published document keeps the exact request schemas out of its components (no operation sends
// them once every body points at its tolerant copy) and the package takes them back losslessly.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';
import { EXACT_REQUESTS, withExactSchemas } from '../../runtime/exact-requests.ts';
import { bundleSpec } from '../../scripts/generators/bundle.ts';
import { published, withExactRequests, withTolerantRequests } from '../../scripts/generators/tolerant-requests.ts';
import { SpecProblem } from '../../scripts/generators/wire-formats.ts';
import { ROOT } from '../support/contract.ts';

const shipped = JSON.parse(readFileSync(path.join(ROOT, 'generated/openapi.json'), 'utf8'));

describe('the exact request schemas of the published document', () => {
  it('are under x-exact-requests, not among the components, and every pointer to them follows them', () => {
    const exact = Object.keys(shipped[EXACT_REQUESTS]);
    expect(exact).toContain('ProcessCardRequest');
    for (const name of exact) expect(shipped.components.schemas[name], name).toBeUndefined();
    const text = JSON.stringify(shipped);
    for (const name of exact) expect(text).not.toContain(`"#/components/schemas/${name}"`);
    // What the copies say they tolerate is still found: among the components or at the root.
    for (const [name, schema] of Object.entries<any>(shipped.components.schemas))
      for (const of of [schema['x-tolerant-of'] ?? []].flat())
        expect(
          shipped.components.schemas[of] ?? shipped[EXACT_REQUESTS][of],
          `${name} x-tolerant-of ${of}`,
        ).toBeDefined();
  });

  it('come back among the components as the bundle made them: published then read back is the bundle', async () => {
    const bundle = await bundleSpec(ROOT);
    const back = withExactSchemas(published(structuredClone(bundle)));
    expect(back).toEqual(bundle);
    const { 'x-generated-by': _banner, ...shippedDoc } = shipped;
    expect(withExactSchemas(shippedDoc)).toEqual(JSON.parse(JSON.stringify(bundle)));
  });

  it('a document without x-exact-requests (a release from before it) is read as it is', () => {
    const old = { openapi: '3.1.0', components: { schemas: { A: { type: 'string' } } } } as any;
    expect(withExactSchemas(old)).toBe(old);
  });
});

describe('a request of several forms, as sent', () => {
  it('is one of its forms and nothing less, to a generator run on the published file (openapi-typescript)', async () => {
    const copies = Object.entries<any>(shipped.components.schemas).filter(([, s]) => s['x-tolerant-of'] && s.anyOf);
    expect(copies.map(([name]) => name)).toContain('WalletProcessCardRequestAsSent');
    const types = astToString(await openapiTS(structuredClone(shipped)));
    for (const [name, schema] of copies) {
      const forms = schema.anyOf.map((f: { $ref: string }) => `components["schemas"]["${f.$ref.split('/').at(-1)}"]`);
      // Not `{ method: ... } | A | B`, which a body of `method` alone satisfies.
      expect(new RegExp(`\\b${name}: ([^;]*);`).exec(types)?.[1], name).toBe(forms.join(' | '));
    }
  });

  it('are told apart by a required field, or the bundle refuses the spec, naming both forms', async () => {
    const exact: any = withExactRequests(await bundleSpec(ROOT));
    expect(() => withTolerantRequests(structuredClone(exact))).not.toThrow();
    // The wallet form made a copy of the card-ID form: no field either requires tells them apart.
    exact.components.schemas.ProcessCard3DS2WithWallet = structuredClone(
      exact.components.schemas.ProcessCard3DS2WithCardID,
    );
    expect(() => withTolerantRequests(exact)).toThrow(SpecProblem);
    expect(() => withTolerantRequests(exact)).toThrow(/ProcessCard3DS2WithCardID and ProcessCard3DS2WithWallet/);
  });
});

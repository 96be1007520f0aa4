// The document itself: Redocly lint (recommended-strict, examples checked) and swagger-parser. The
// checks are functions (document-checks.ts) that test/architecture/add-method.test.ts also runs on a
// copy of the package with a method added.
import { describe, expect, it } from 'vitest';
import { lintProblems, swaggerProblems, unversionedOperations } from './document-checks.ts';

describe('the OpenAPI document', () => {
  it('passes Redocly lint (recommended-strict, invalid examples are errors) with no problem at all', async () => {
    // As `npm run lint:spec` runs it: Redocly's lint over the document with its method lists composed.
    expect(await lintProblems()).toEqual([]);
  });

  it('is valid OpenAPI 3.1 for swagger-parser, as written and as bundled', async () => {
    expect(await swaggerProblems()).toEqual([]);
  });

  it('requires SVC-API-VERSION: 2.0 on every operation', async () => {
    expect(await unversionedOperations()).toEqual([]);
  });
});

// The document itself: Redocly lint (recommended-strict, examples checked) and swagger-parser. The
// checks are functions (document-checks.ts) that test/architecture/add-method.test.ts also runs on a
// copy of the package with a method added.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bundleLintProblems,
  lintProblems,
  malformedKeys,
  swaggerProblems,
  unversionedOperations,
} from './document-checks.ts';

describe('the OpenAPI document', () => {
  it('passes Redocly lint (recommended-strict, invalid examples are errors) with no problem at all', async () => {
    // As `npm run lint:spec` runs it: Redocly's lint over the document with its method lists composed.
    expect(await lintProblems()).toEqual([]);
  });

  it('as shipped (generated/openapi.json), passes `redocly lint` (recommended-strict and the contract rules) with no problem at all', async () => {
    // The form/XML media types are composed in as the document is bundled: only this run sees their
    // examples (form fields and XML answers as values their schemas describe, with the form's encoding).
    expect(await bundleLintProblems()).toEqual([]);
  });

  it('is valid OpenAPI 3.1 for swagger-parser, as written and as bundled', async () => {
    expect(await swaggerProblems()).toEqual([]);
  });

  it('holds no key with a space and no keyword set to null, outside its examples (a YAML flow mapping cut at a comma)', async () => {
    expect(await malformedKeys()).toEqual([]);
    // What it finds: a cut flow mapping's key, under a property that is itself named examples too.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-keys-'));
    try {
      const broken = {
        components: {
          schemas: {
            A: {
              properties: { examples: { type: 'string', 'cut here.': null } },
              examples: [{ 'an example may hold anything': null }],
            },
          },
        },
      };
      await writeFile(path.join(dir, 'doc.json'), JSON.stringify(broken));
      expect(await malformedKeys(path.join(dir, 'doc.json'))).toEqual([
        '#/components/schemas/A/properties/examples/cut here. = null',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('requires SVC-API-VERSION: 2.0 on every operation', async () => {
    expect(await unversionedOperations()).toEqual([]);
  });
});

// docs/WIRE-FORMATS.md's compatibility table is what the corpus and the decisions say today. To
// rewrite it after changing either: PGW_WRITE_DOCS=1 npm test -- test/compat/compat-table.test.ts
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';
import { compatTable, withCompatTable } from './compat-table.ts';

const DOC = path.join(ROOT, 'docs/WIRE-FORMATS.md');

it('docs/WIRE-FORMATS.md holds the compatibility table the corpus writes (PGW_WRITE_DOCS=1 rewrites it)', () => {
  if (process.env.PGW_WRITE_DOCS === '1') writeFileSync(DOC, withCompatTable(readFileSync(DOC, 'utf8'), compatTable()));
  const doc = readFileSync(DOC, 'utf8');
  expect(doc).toBe(withCompatTable(doc, compatTable()));
});

// The rule marks (spec/extensions/rules.schema.yaml): each one in the bundled document valid against
// that schema; every mark the schema declares listed by the docs' generator and checked by the suite's
// source; docs/RULES.md what the spec writes now; and the schemas that restate a base type's pattern
// to carry a mark (the diff gate reads an allOf as a widened type) still restate it exactly.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { rulesDocText } from '../../scripts/generate.ts';
import { RULE_MARKS } from '../../scripts/generators/rules-table.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const text = (file: string) => readFile(path.join(ROOT, file), 'utf8');

function marked(node: unknown, at: string, names: string[], out: { at: string; mark: string; value: unknown }[] = []) {
  if (!node || typeof node !== 'object') return out;
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (names.includes(k)) out.push({ at, mark: k, value: v });
    else marked(v, `${at}/${k}`, names, out);
  }
  return out;
}

describe('rule marks', async () => {
  const doc = JSON.parse(await text('generated/openapi.json'));
  const schema = YAML.parse(await text('spec/extensions/rules.schema.yaml'));
  const declared = Object.keys(schema.properties);
  const validate = new (Ajv2020 as any)({ strict: false }).compile(schema);
  const marks = marked(doc, '#', declared);

  it('every mark the schema declares is used, listed in the rules table and checked by the suite', async () => {
    expect(Object.keys(RULE_MARKS).sort()).toEqual([...declared].sort());
    expect(new Set(marks.map((m) => m.mark))).toEqual(new Set(declared));
    for (const [mark, { checkedBy }] of Object.entries(RULE_MARKS)) {
      const files = [...checkedBy.matchAll(/(?:contract|runtime)\/[\w-]+\.ts/g)].map((m) => m[0]);
      const sources = (await Promise.all(files.map(text))).join('\n');
      // x-status-progression is read by the checks of the marks that name it.
      expect(sources.includes(`'${mark}'`) || sources.includes('x-status-progression'), mark).toBe(true);
    }
  });

  it('each mark in the bundled document is valid against spec/extensions/rules.schema.yaml', () => {
    expect(marks.length).toBeGreaterThan(20);
    const invalid = marks.filter((m) => !validate({ [m.mark]: m.value })).map((m) => `${m.at} ${m.mark}`);
    expect(invalid).toEqual([]);
  });

  it('docs/RULES.md is what the marks write (run `npm run generate` if not)', async () => {
    expect(await text('docs/RULES.md')).toBe(await rulesDocText(ROOT));
  });

  it('a schema restating a base to carry a mark keeps the base pattern exactly', () => {
    const s = doc.components.schemas;
    for (const [copy, base] of [
      ['SettledDate', 'Date'],
      ['SettlementDay', 'Date'],
      ['PayoutTimestamp', 'Timestamp'],
    ] as const)
      expect([copy, s[copy].type, s[copy].pattern]).toEqual([copy, s[base].type, s[base].pattern]);
  });
});

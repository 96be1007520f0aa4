// Lifecycle marks (x-added-in, x-deprecated-in, x-removal): each valid against its JSON Schema, no
// later than the package's own version, a removal only after a deprecation and in a breaking step,
// a deprecated operation flagged `deprecated` for OpenAPI tools too, and every mark shown in the docs.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import semver from 'semver';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { versionStep } from '../../scripts/diff/index.ts';
import { lifecycleNote } from '../../scripts/generators/lifecycle.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const json = async (file: string) => JSON.parse(await readFile(path.join(ROOT, file), 'utf8'));

function marked(node: unknown, at: string, out: { at: string; node: Record<string, any> }[] = []) {
  if (!node || typeof node !== 'object') return out;
  const record = node as Record<string, any>;
  if (!Array.isArray(node) && ['x-added-in', 'x-deprecated-in', 'x-removal'].some((k) => k in record))
    out.push({ at, node: record });
  for (const [k, v] of Object.entries(record)) marked(v, `${at}/${k}`, out);
  return out;
}

describe('lifecycle marks', async () => {
  const doc = await json('generated/openapi.json');
  const pkg = await json('package.json');
  const schema = YAML.parse(await readFile(path.join(ROOT, 'spec/extensions/lifecycle.schema.yaml'), 'utf8'));
  const validate = new (Ajv2020 as any)({ strict: false }).compile(schema);
  const marks = marked(doc, '#');

  it('the deprecated payout alias carries them', () => {
    expect(marks.map((m) => m.at)).toContain(
      '#/paths/~1payout~1{payoutId}~1transaction~1{transactionId}~1status/post'.replace(/~1/g, '/'),
    );
  });

  it.each(marks.map((m) => [m.at, m.node] as const))('%s', (_at, node) => {
    const own = Object.fromEntries(Object.entries(node).filter(([k]) => k.startsWith('x-')));
    expect(validate(own), JSON.stringify(validate.errors)).toBe(true);
    for (const key of ['x-added-in', 'x-deprecated-in'] as const) {
      if (node[key])
        expect(semver.lte(node[key], pkg.version), `${key} ${node[key]} is after ${pkg.version}`).toBe(true);
    }
    if (node['x-removal']) expect(versionStep(node['x-deprecated-in'], node['x-removal'])).toBe('major');
    if (node['x-deprecated-in'] && (node.responses || node.operationId)) expect(node.deprecated).toBe(true);
  });

  it('the docs show every mark and both versions', async () => {
    const html = await readFile(path.join(ROOT, 'generated/docs/index.html'), 'utf8');
    for (const { node } of marks) expect(html).toContain(lifecycleNote(node)!.note.replace(/\*\*/g, '').split(';')[0]);
    expect(html).toContain(`API ${doc.info.version}`);
    expect(html).toContain(`described by the package <code>${pkg.name}</code> ${pkg.version}`);
  });
});

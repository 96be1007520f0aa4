// What a wire format cannot carry is found when the document is built, not at run time: each
// protocol module declares its limits (runtime/protocols/<id>.ts, `limits`), and a schema that breaks
// one is reported by the lint (contract/wire-format-limits) at the property in the method's own file,
// and stops the bundle with the method's file and the fix. Shown on a copy of the spec with the
// list-answer fixture (test/fixtures/methods/post/listRefunds.yaml) broken three ways.
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { lint, loadConfig } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { limits as formLimits } from '../../runtime/protocols/form.ts';
import { limits as jsonLimits } from '../../runtime/protocols/json.ts';
import type { Limit, PropertyView } from '../../runtime/protocols/protocol.ts';
import { deref } from '../../runtime/document.ts';
import { bundleSpec } from '../../scripts/generators/bundle.ts';
import { namedShape } from '../../scripts/generators/shapes.ts';
import { protocolsOf } from '../../scripts/lib/protocols.ts';
import { ComposingResolver } from '../../scripts/generators/compose.ts';
import { ROOT } from '../support/contract.ts';

const FIXTURE = path.join(ROOT, 'test/fixtures/methods/post/listRefunds.yaml');
const RULE = 'contract/wire-format-limits';
/** The copy's lint configuration: that rule alone, as redocly.yaml sets it. */
const LIMITS_CONFIG = 'redocly-wire-format-limits.yaml';

const property = (p: Partial<PropertyView> & { schema: Record<string, any> }): PropertyView => ({
  side: 'answer',
  name: 'refunds',
  within: [],
  inList: false,
  topLevel: new Set(['responseCode', 'transactionID', 'refunds']),
  ...p,
});
const found = (limits: readonly Limit[], p: PropertyView) => limits.flatMap((l) => (l.check(p) ? [l.id] : []));

describe('the limits each protocol declares', () => {
  it('form/XML: a list needs its items named, a nested field its own name, an element an XML name; no null, no open map', () => {
    expect(found(formLimits, property({ schema: { type: 'array', items: { type: 'object' } } }))).toEqual([
      'list-item-name',
    ]);
    expect(found(formLimits, property({ schema: { type: 'array', items: { xml: { name: 'refund' } } } }))).toEqual([]);
    // The `[]` of an unsent custom field holds no item: nothing to name.
    expect(found(formLimits, property({ schema: { type: 'array', maxItems: 0, items: false } }))).toEqual([]);
    expect(
      found(
        formLimits,
        property({ name: 'transactionID', within: ['refunds'], inList: true, schema: { type: 'string' } }),
      ),
    ).toEqual(['flat-leaf-names']);
    expect(found(formLimits, property({ name: '1st', schema: { type: 'string' } }))).toEqual(['xml-name']);
    expect(found(formLimits, property({ side: 'request', name: '1st', schema: { type: 'string' } }))).toEqual([]);
    expect(found(formLimits, property({ name: 'note', schema: { type: ['string', 'null'] } }))).toEqual(['no-null']);
    expect(
      found(
        formLimits,
        property({ name: 'tags', schema: { type: 'object', additionalProperties: { type: 'string' } } }),
      ),
    ).toEqual(['named-fields']);
  });

  it('JSON: a number beyond what a double holds exactly, at the precision the schema asks', () => {
    expect(found(jsonLimits, property({ name: 'n', schema: { type: 'integer', maximum: 2 ** 60 } }))).toEqual([
      'exact-number',
    ]);
    expect(found(jsonLimits, property({ name: 'n', schema: { type: 'integer', maximum: 2 ** 52 } }))).toEqual([]);
    expect(
      found(jsonLimits, property({ name: 'x', schema: { type: 'number', maximum: 1e9, multipleOf: 1e-9 } })),
    ).toEqual(['exact-number']);
    expect(
      found(jsonLimits, property({ name: 'x', schema: { type: 'number', maximum: 1e9, multipleOf: 0.01 } })),
    ).toEqual([]);
  });
});

describe('a schema a wire format cannot carry, in a method file', () => {
  let copy: string;
  let config: Awaited<ReturnType<typeof loadConfig>>;
  const method = () => path.join(copy, 'spec/methods/post/listRefunds.yaml');

  beforeAll(async () => {
    copy = await mkdtemp(path.join(os.tmpdir(), 'pgw-limits-'));
    for (const dir of ['spec', 'lint', 'runtime', 'releases', 'redocly.yaml'])
      await cp(path.join(ROOT, dir), path.join(copy, dir), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
    // The lint of these tests: redocly.yaml's plugins and its setting of the rule that reports what a
    // wire format cannot carry, and no other rule. The whole of redocly.yaml (recommended-strict, every
    // example validated: 1 to 1.7 s of CPU a lint, against 0.4 s) is what test/contract/document.test.ts
    // lints; here only this rule's findings are read. Loaded once: the copy's spec changes, not its configuration.
    const own = YAML.parse(await readFile(path.join(copy, 'redocly.yaml'), 'utf8'));
    expect(own.rules[RULE]).toBe('error');
    await writeFile(
      path.join(copy, LIMITS_CONFIG),
      YAML.stringify({ extends: [], plugins: own.plugins, rules: { [RULE]: own.rules[RULE] } }),
    );
    config = await loadConfig({ configPath: path.join(copy, LIMITS_CONFIG) });
  });
  afterAll(() => rm(copy, { recursive: true, force: true }));

  /** The method file as the fixture writes it, changed by `edit`. */
  const write = async (edit: (text: string) => string) => writeFile(method(), edit(await readFile(FIXTURE, 'utf8')));
  const lintOfCopy = async () => {
    const problems = await lint({
      ref: path.join(copy, 'spec/openapi.yaml'),
      config,
      externalRefResolver: new ComposingResolver(copy),
    });
    return problems
      .filter((p) => p.ruleId === RULE)
      .map((p) => ({ file: path.relative(copy, p.location[0]!.source.absoluteRef), message: p.message }));
  };

  it('is none when the list names its items: the fixture lints and bundles', async () => {
    await write((text) => text);
    expect(await lintOfCopy()).toEqual([]);
    const doc = await bundleSpec(copy);
    // The XML answer's example is a value (the JSON example itself, which reads back unchanged); the
    // form protocol writes it as a list of named items.
    const example = deref(
      doc,
      doc.paths['/post'].post.responses['200'].content['application/xml'].examples.listRefundsApproved,
    );
    expect(protocolsOf(doc).byId('form')!.writeAnswer(example.value, namedShape(doc, 'ListRefundsResult'))).toContain(
      '<refunds><refund><refundID>1336-6a2e8f10-b600-11e6-b9c3-005056b209e0</refundID><refundAmount>5.00</refundAmount></refund>',
    );
  });

  it('is reported in the method file with the fix, and stops the bundle saying so: a list whose items have no name', async () => {
    await write((text) => text.replace(/^ +xml: \{name: refund\}\n/m, ''));
    expect(await lintOfCopy()).toEqual([
      {
        file: 'spec/methods/post/listRefunds.yaml',
        message: expect.stringContaining(
          "`refunds` is a list: the XML answer writes it as <refunds> holding one element per item, and its items have no element name. Fix: name the item's element under `items`: `xml: {name: refund}`.",
        ),
      },
    ]);
    await expect(bundleSpec(copy)).rejects.toThrow(
      "spec/methods/post/listRefunds.yaml: ListRefundsResult.refunds (form/XML): `refunds` is a list: the XML answer writes it as <refunds> holding one element per item, and its items have no element name. Fix: name the item's element under `items`: `xml: {name: refund}`.",
    );
  });

  it('and a nested field that ActiveMerchant would read in place of a top-level one', async () => {
    await write((text) => text.replaceAll('refundID', 'transactionID'));
    const problems = await lintOfCopy();
    expect(problems).toEqual([
      {
        file: 'spec/methods/post/listRefunds.yaml',
        message: expect.stringContaining('`refunds.transactionID` shares its name'),
      },
    ]);
    await expect(bundleSpec(copy)).rejects.toThrow('Fix: give the nested field a name of its own');
  });

  it('and an integer JSON cannot hold exactly, in every protocol that serves the path', async () => {
    await write((text) =>
      text.replace(
        'refundAmount: {$ref',
        'refundCount: {type: integer, maximum: 100000000000000000}\n          refundAmount: {$ref',
      ),
    );
    const problems = await lintOfCopy();
    expect(problems.map((p) => p.message.match(/the (\w+) wire format/)?.[1])).toEqual(['json']);
    expect(problems[0]!.message).toContain('`refundCount` is an integer bounded by 100000000000000000');
  });
});

// The contract's own extensions are complete and consistent: every method of a shared path has a
// branch, a mapping entry and a descriptor; every descriptor names schemas, recipes and examples that
// exist; provenance is stated everywhere.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { withExactRequests } from '../../scripts/generators/tolerant-requests.ts';
import { resolvePointer } from '../../scripts/lib/contract.ts';
import { doc, operations, readYaml } from '../support/contract.ts';

// The request bodies as composed from the descriptors: each published body points at its tolerant
// copy (x-tolerant-of, scripts/generators/tolerant-requests.ts), checked below; here, the exact schemas.
const exactDoc = withExactRequests(doc);

const SHARED_PATHS = ['/post', '/token', '/partner', '/processCard'];
const ajv = new Ajv2020({ strict: false, allErrors: true });
const checkDescriptor = ajv.compile(readYaml('spec/extensions/descriptor.schema.yaml'));
const checkRecipe = ajv.compile(readYaml('spec/extensions/hash-recipe.schema.yaml'));
const schema = (pointer: string) => resolvePointer(doc, pointer);
const recipes = doc['x-hash-recipes'];

/** Every property the request accepts, across the forms (oneOf branches) of one method. */
function requestProperties(pointer: string): Set<string> {
  const s = schema(pointer);
  const names = new Set(Object.keys(s.properties ?? {}));
  for (const branch of s.oneOf ?? []) for (const n of Object.keys(schema(branch.$ref).properties ?? {})) names.add(n);
  return names;
}

describe('shared paths: oneOf on method, a discriminator where every method has one form', () => {
  for (const p of SHARED_PATHS) {
    it(`${p}: each branch is a $ref, requires method with a const, and is the mapping's target for that const`, () => {
      const body = exactDoc.paths[p].post.requestBody.content['application/json'].schema;
      const methods = doc.paths[p].post['x-methods'];
      // A path of one method is that method's request itself: a oneOf of one is no choice (Redocly's
      // no-illogical-composition-keywords), and there is nothing for a discriminator to tell apart.
      const branches: { $ref: string }[] = body.oneOf ?? [body];
      if (!body.oneOf) expect(Object.keys(body)).toEqual(['$ref']);
      // The published body: the same branches and mapping, each the tolerant copy of its exact schema.
      const published = doc.paths[p].post.requestBody.content['application/json'].schema;
      const publishedBranches: { $ref: string }[] = published.oneOf ?? [published];
      expect(publishedBranches.map((b) => schema(b.$ref)['x-tolerant-of'])).toEqual(
        branches.map((b) => b.$ref.split('/').pop()),
      );
      for (const [value, ref] of Object.entries<string>(published.discriminator?.mapping ?? {}))
        expect(`#/components/schemas/${schema(ref)['x-tolerant-of']}`).toBe(body.discriminator.mapping[value]);
      const unions = branches.filter((b) => schema(b.$ref).oneOf);
      // A discriminator maps a value to one object; where a method takes several forms there is none
      // (tools cannot follow a mapped union), and each form's const tells the methods apart.
      if (unions.length || !body.oneOf) expect(body.discriminator).toBeUndefined();
      else expect(body.discriminator.propertyName).toBe('method');
      const mapping: Record<string, string> | undefined = body.discriminator?.mapping;
      expect(branches.length).toBe(Object.keys(methods).length);
      const values: string[] = [];
      for (const branch of branches) {
        const s = schema(branch.$ref);
        expect(s.required).toContain('method');
        const value = s.properties.method.const;
        expect(typeof value).toBe('string');
        values.push(value);
        if (mapping) expect(mapping[value]).toBe(branch.$ref);
        expect(methods[value].request).toBe(branch.$ref);
        for (const form of s.oneOf ?? []) {
          const f = schema(form.$ref);
          expect(f.required, form.$ref).toContain('method');
          expect(f.properties.method.const, form.$ref).toBe(value);
          expect(f.additionalProperties, form.$ref).toBe(false);
        }
      }
      expect(Object.keys(methods).sort()).toEqual(values.sort());
      if (mapping) expect(Object.keys(methods).sort()).toEqual(Object.keys(mapping).sort());
    });
  }
});

describe('operation descriptors (x-methods, x-operation)', () => {
  it('operationIds are unique across every operation and method', () => {
    const ids = operations.map((o) => o.operationId);
    expect(ids.length).toBe(new Set(ids).size);
  });

  for (const op of operations) {
    describe(op.operationId, () => {
      it('matches the descriptor schema and states its provenance', () => {
        const {
          verb: _v,
          path: _p,
          method: _m,
          tags: _t,
          deprecated: _d,
          security: _s,
          parameters: _pa,
          webhook: _w,
          ...descriptor
        } = op;
        if (!op.method) {
          delete (descriptor as any).operationId;
          delete (descriptor as any).summary;
        }
        if (
          !op.method &&
          op.status ===
            (op.webhook
              ? 200
              : Number(
                  Object.keys(
                    resolvePointer(
                      doc,
                      `#/${op.webhook ? 'webhooks' : 'paths'}/${op.path.replace(/\//g, '~1')}/${op.verb}`,
                    ).responses,
                  ).find((c) => c.startsWith('2')),
                ))
        )
          delete (descriptor as any).status;
        if (op.method) delete (descriptor as any).status;
        expect(checkDescriptor(descriptor), JSON.stringify(checkDescriptor.errors)).toBe(true);
      });

      it('names schemas that exist', () => {
        for (const key of ['request', 'result', 'refusal'] as const) {
          if (op[key]) expect(schema(op[key]!), `${key} ${op[key]}`).toBeTruthy();
        }
        if (!op.webhook) {
          expect(op.result).toBeTruthy();
          expect(op.refusal).toBeTruthy();
        }
      });

      it('names recipes that exist, over fields the request or result declares', () => {
        for (const use of op.hashes ?? []) {
          expect(recipes[use.recipe], use.recipe).toBeTruthy();
          if (use.in !== 'header') expect(requestProperties(op.request!).has(use.name), use.name).toBe(true);
          else expect(op.webhook || op.security.includes('SvcMessageHash')).toBe(true);
        }
        for (const use of op.resultHashes ?? []) {
          expect(recipes[use.recipe], use.recipe).toBeTruthy();
          expect(Object.keys(schema(op.result!).properties)).toContain(use.name);
        }
      });

      it('has a request example (when it takes a body), a result example and a refusal example', () => {
        if (op.request) expect(op.examples.request.length).toBeGreaterThan(0);
        if (!op.webhook) {
          expect(op.examples.result?.length ?? 0).toBeGreaterThan(0);
          expect(op.examples.refusal?.length ?? 0).toBeGreaterThan(0);
        }
      });

      it('authenticates: body credentials or header credentials with a message hash', () => {
        if (op.webhook) return;
        const body = op.credentials ?? [];
        const header = op.security;
        expect(body.length + header.length).toBeGreaterThan(0);
        if (header.length) expect(header).toContain('SvcMessageHash');
        if (body.includes('merchant') || body.includes('partner')) {
          const props = requestProperties(op.request!);
          expect(props.has(body.includes('partner') ? 'partnerUUID' : 'merchantUUID')).toBe(true);
          expect(props.has('apiKey')).toBe(true);
        }
      });
    });
  }
});

describe('hash recipes (x-hash-recipes)', () => {
  for (const [name, recipe] of Object.entries<any>(recipes)) {
    it(`${name} matches the recipe schema`, () => {
      expect(checkRecipe(recipe), JSON.stringify(checkRecipe.errors)).toBe(true);
    });
  }
  it('every recipe is used by some operation or webhook', () => {
    const used = new Set(
      operations.flatMap((o) => [...(o.hashes ?? []), ...(o.resultHashes ?? [])].map((h) => h.recipe)),
    );
    expect(Object.keys(recipes).filter((r) => !used.has(r))).toEqual([]);
  });
});

describe('provenance and rules written as schema', () => {
  const schemas = Object.entries<any>(doc.components.schemas);

  it('every x-inferred carries a reason', () => {
    const walk = (node: any, where: string): void => {
      if (!node || typeof node !== 'object') return;
      if ('x-inferred' in node)
        expect(typeof node['x-inferred'] === 'string' && node['x-inferred'].length > 10, where).toBe(true);
      for (const [k, v] of Object.entries(node)) walk(v, `${where}/${k}`);
    };
    walk(doc, '#');
  });

  it('if/then clauses name only properties the schema declares', () => {
    for (const [name, s] of schemas) {
      if (!s.if) continue;
      const declared = Object.keys(s.properties);
      const named = JSON.stringify([s.if, s.then])
        .match(/"required":\[[^\]]*\]/g)!
        .flatMap((m) => JSON.parse(m.slice(11)));
      for (const field of named) expect(declared, `${name}.${field}`).toContain(field);
    }
  });

  it('request schemas are closed, so a misspelt field is refused and the forms of a method exclude each other', () => {
    for (const op of operations.filter((o) => o.request && !o.webhook)) {
      const s = schema(op.request!);
      const forms = s.oneOf ? s.oneOf.map((b: any) => schema(b.$ref)) : [s];
      for (const f of forms) expect(f.additionalProperties, op.operationId).toBe(false);
    }
  });

  it('keeps the seed quirks: string-or-integer responseCode, [] for empty custom fields, 201 on Get PayID, /notify route, zip settlement', () => {
    expect(schema('#/components/schemas/OutcomeCode').type).toEqual(['string', 'integer']);
    expect(schema('#/components/schemas/CustomEcho').oneOf).toEqual([
      { type: 'string' },
      { type: 'array', maxItems: 0, items: false },
    ]);
    expect(operations.find((o) => o.operationId === 'getPayId')!.status).toBe(201);
    expect(Object.keys(doc.paths['/npp/payid/{payId}'].get.responses)).toContain('201');
    expect(operations.find((o) => o.operationId === 'getPayoutTransactionStatus')!.path).toMatch(/\/notify$/);
    const alias = operations.find((o) => o.operationId === 'getPayoutTransactionStatusAlias')!;
    expect(alias.path).toMatch(/\/status$/);
    expect(alias.deprecated).toBe(true);
    expect(doc.paths['/post'].post.responses['200'].content['application/zip']).toBeTruthy();
    expect(operations.find((o) => o.operationId === 'getSettlement')!.resultType).toBe('application/zip');
  });
});

// Every example is true to the contract: valid against its own operation's schema (not merely the
// path's union), accepted by exactly one branch of its path, signed with the right hashes.
import { describe, expect, it } from 'vitest';
import { exampleValue, resolvePointer } from '../../scripts/lib/contract.ts';
import { expectedExampleHashes, expectedRecipeExamples } from '../../scripts/sign-examples.ts';
import { doc, errorsOf, operations, validatorFor } from '../support/contract.ts';

const bodySchemaPointer = (path: string, verb: string) =>
  `#/${path.startsWith('/') ? 'paths' : 'webhooks'}/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${verb}/requestBody/content/application~1json/schema`;

describe('examples', () => {
  for (const op of operations) {
    describe(op.operationId, () => {
      for (const name of op.examples.request) {
        it(`request example ${name} is valid against ${op.request}`, () => {
          const v = validatorFor(op.request!);
          expect(v(exampleValue(doc, name)), errorsOf(v)).toBe(true);
        });
        if (op.method) {
          it(`request example ${name} is accepted by exactly one branch of ${op.path}, and one form of ${op.method}`, () => {
            const body = resolvePointer(doc, bodySchemaPointer(op.path, op.verb));
            const value = exampleValue(doc, name);
            // A path of one method has no oneOf: its body is that method's request. The published
            // branches are the tolerant copies of the methods' requests (x-tolerant-of).
            const branches: { $ref: string }[] = body.oneOf ?? [body];
            const accepting = branches
              .filter((b) => validatorFor(b.$ref)(value))
              .map((b) => `#/components/schemas/${resolvePointer(doc, b.$ref)['x-tolerant-of']}`);
            expect(accepting).toEqual([op.request]);
            const forms = resolvePointer(doc, op.request!).oneOf;
            if (forms) expect(forms.filter((f: any) => validatorFor(f.$ref)(value)).length).toBe(1);
          });
        }
      }
      for (const name of op.examples.result ?? []) {
        if (op.resultType) continue; // a zip or a CSV file, not JSON
        it(`result example ${name} is valid against ${op.result} and is not a refusal`, () => {
          const v = validatorFor(op.result!);
          const value = exampleValue(doc, name);
          expect(v(value), errorsOf(v)).toBe(true);
          expect(validatorFor(op.refusal!)(value)).toBe(false);
        });
      }
      for (const name of op.examples.refusal ?? []) {
        it(`refusal example ${name} is valid against ${op.refusal} and not against the result`, () => {
          const value = exampleValue(doc, name);
          const v = validatorFor(op.refusal!);
          expect(v(value), errorsOf(v)).toBe(true);
          expect(validatorFor(op.result!)(value)).toBe(false);
        });
      }
    });
  }

  it('every example a media type holds is named by a descriptor (none is orphaned or missing)', () => {
    const named = new Set(
      operations.flatMap((o) => [...o.examples.request, ...(o.examples.result ?? []), ...(o.examples.refusal ?? [])]),
    );
    const held = new Set<string>();
    const collect = (node: any, underMedia: boolean): void => {
      if (!node || typeof node !== 'object') return;
      for (const [k, v] of Object.entries<any>(node)) {
        if (k === 'examples' && underMedia) for (const n of Object.keys(v)) held.add(n);
        collect(v, /^(application|text)\//.test(k) || (underMedia && k !== 'schema'));
      }
    };
    collect(
      {
        paths: doc.paths,
        webhooks: doc.webhooks,
        responses: { PayoutTransactionStatus: doc.components.responses.PayoutTransactionStatus },
      },
      false,
    );
    expect([...named].filter((n) => !held.has(n))).toEqual([]);
    expect([...held].filter((n) => !named.has(n))).toEqual([]);
  });

  it('every hash in every example is what its recipe gives with the sandbox passphrase', () => {
    const wrong: string[] = [];
    for (const [name, fields] of expectedExampleHashes(doc)) {
      const value = exampleValue(doc, name) as Record<string, unknown>;
      for (const [field, hash] of Object.entries(fields)) if (value[field] !== hash) wrong.push(`${name}.${field}`);
    }
    expect(wrong, 'run `npm run sign-examples`').toEqual([]);
    expect(expectedExampleHashes(doc).size).toBeGreaterThan(30);
  });

  it("every recipe's worked example is right", () => {
    for (const [name, values] of expectedRecipeExamples(doc)) {
      expect(doc['x-hash-recipes'][name]!.example, name).toMatchObject(values);
    }
  });
});

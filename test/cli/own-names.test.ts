// Finding: names the CLI looks up in a table (trigger's EVENT, sign's recipe) reached object
// internals: `trigger __proto__` failed with a TypeError instead of "no such event". Every name an
// object inherits, and any other string, is looked up in the table's own entries only.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sign } from '../../cli/sign.ts';
import { hashRecipes } from '../../generated/hash-recipes.ts';
import { operations } from '../../generated/operations.ts';
import { run as trigger } from '../../cli/commands/trigger.ts';

const INHERITED = [
  ...Object.getOwnPropertyNames(Object.prototype),
  ...Object.getOwnPropertyNames(Function.prototype),
  'prototype',
];
const name = fc.oneof(fc.constantFrom(...INHERITED), fc.string({ minLength: 1, maxLength: 20 }));

describe('CLI names are looked up in own properties only', () => {
  it('trigger: any name that is no event is "no event", exit 2, without a request', async () => {
    const known = new Set([
      'payoutTransaction',
      'payoutApproved',
      'payoutReturned',
      'payoutReturnDeclined',
      'directDebitOutcome',
      'batchNotify',
      'merchantCreated',
    ]);
    await fc.assert(
      fc.asyncProperty(
        name.filter((n) => !known.has(n) && !n.startsWith('-')),
        async (event) => {
          const printed: string[] = [];
          // A mistake is one line on stderr (printError), as every command's is.
          const code = await trigger([event, '--base', 'http://127.0.0.1:9'], {
            print: (l) => printed.push(l),
            printError: (l) => printed.push(l),
          });
          expect(printed.join('\n')).toContain(`no event ${JSON.stringify(event)}`);
          expect(code).toBe(2);
        },
      ),
      { seed: 2812, numRuns: 200, examples: INHERITED.map((n) => [n]) },
    );
  });

  it('sign: any name that is neither a recipe nor an operationId is refused by name', () => {
    const known = new Set([...Object.keys(hashRecipes), ...operations.map((o) => o.operationId)]);
    fc.assert(
      fc.property(
        name.filter((n) => !known.has(n)),
        (target) => {
          expect(() => sign({ target, passphrase: 'p', body: {}, params: {}, query: {} })).toThrow(
            `'${target}' is neither a recipe`,
          );
        },
      ),
      { seed: 2813, numRuns: 300, examples: INHERITED.map((n) => [n]) },
    );
  });
});

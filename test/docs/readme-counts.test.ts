// The figures about the contract in docs/CHANGING.md are the operation table's, not numbers kept by hand: the
// sentence that counts the operations is read back and compared with generated/operations.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { operations } from '../../generated/operations.ts';
import { ROOT } from '../support/contract.ts';

const readme = readFileSync(path.join(ROOT, 'docs/CHANGING.md'), 'utf8').replace(/\s+/g, ' ');
const bundled = JSON.parse(readFileSync(path.join(ROOT, 'generated/openapi.json'), 'utf8'));
const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

describe('README figures', () => {
  it('"The contract covers N operations (S seeded, I inferred; A aliases) and W webhooks" is the table', () => {
    const m = readme.match(
      /The contract covers \*\*(\d+) operations\*\* \((\d+) that the seed shows, (\d+) that it only names or implies,.*?; (\w+) of them are aliases.*?\) and \*\*(\d+) webhooks\*\*/,
    );
    expect(m, 'the README sentence that counts the operations').not.toBeNull();
    const [, total, seeded, inferred, aliases, webhooks] = m!;
    expect(Number(total)).toBe(operations.length);
    expect(Number(seeded)).toBe(operations.filter((o) => 'seed' in o.provenance).length);
    expect(Number(inferred)).toBe(operations.filter((o) => 'inferred' in o.provenance).length);
    expect(WORDS.indexOf(aliases!)).toBe(operations.filter((o) => o.aliasOf).length);
    expect(Number(webhooks)).toBe(Object.keys(bundled.webhooks).length);
  });

  it('"runs the collection with Newman: R requests (N operations, ...), T assertions" is generated/postman.json', () => {
    const m = readme.match(
      /runs the collection with Newman: (\d+) requests \((\d+) operations, and (\d+) fresh producers in Clean up\), (\d+) assertions/,
    );
    expect(m, 'the README sentence that counts the Postman requests').not.toBeNull();
    const [, requests, ops, producers, assertions] = m!.map(Number);
    const collection = JSON.parse(readFileSync(path.join(ROOT, 'generated/postman.json'), 'utf8'));
    let seen = 0;
    let tests = 0;
    const walk = (items: any[]): void => {
      for (const item of items) {
        if (item.item) walk(item.item);
        if (!item.request) continue;
        seen++;
        for (const e of item.event ?? [])
          if (e.listen === 'test') tests += (e.script.exec.join('\n').match(/pm\.test\(/g) ?? []).length;
      }
    };
    walk(collection.item);
    expect(requests).toBe(seen);
    expect(ops! + producers!).toBe(seen);
    expect(ops).toBe(operations.length);
    expect(assertions).toBe(tests);
  });
});

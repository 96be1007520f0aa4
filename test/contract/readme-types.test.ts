// The compiler holds the README, the guides and the handlers to the contract: every ```ts example of
// the README and of docs/*.md that imports the package type-checks against this checkout (the package's subpaths mapped to their
// sources), and a handler file that returns an incomplete result, or a refusal written as an object
// literal with a code of 0, fails `tsc` with the errors expected, where expected. Both are read from
// the run's one compilation for the type tests (test/support/type-check.ts), which holds them beside
// the project.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';
import { exampleBlocks, PUBLISHED_TYPES, typeCheck } from '../support/type-check.ts';

describe('the compiler', () => {
  it('gives every schema with a format a real type, not unknown (Email, IpAddress, Country)', async () => {
    const doc = JSON.parse(await readFile(path.join(ROOT, 'generated/openapi.json'), 'utf8'));
    const types = await readFile(path.join(ROOT, 'generated/types.ts'), 'utf8');
    const formatted = Object.entries<any>(doc.components.schemas)
      .filter(([, s]) => /"format":/.test(JSON.stringify(s)) && !s.properties)
      .map(([name]) => name);
    expect(formatted).toEqual(expect.arrayContaining(['Email', 'IpAddress']));
    const typeOf = (name: string) => types.match(new RegExp(`^ {8}${name}: (.*);$`, 'm'))?.[1];
    expect(formatted.filter((name) => !typeOf(name) || /\bunknown\b/.test(typeOf(name)!))).toEqual([]);
  });

  it("type-checks every README and guide example that imports the package, OperationResult<'getPayId'> among them", async () => {
    const blocks = await exampleBlocks();
    expect(blocks.some((b) => b.includes("OperationResult<'getPayId'>"))).toBe(true);
    const { errors, examples, other } = await typeCheck();
    // Each block is compiled, as a module of its own (readme-N.ts).
    expect(examples).toHaveLength(blocks.length);
    // No error in an example, nor in the sources they import (only the bad handlers below have errors).
    expect(Object.entries(errors).filter(([file]) => file !== 'bad-handlers.ts')).toEqual([]);
    expect(other).toBe('');
  }, 300_000);

  // openapi-typescript run on the published file, as a client team that makes its own types runs it:
  // every reference it follows is one it can write as a type (a $ref into #/paths/… it cannot).
  it('compiles the types openapi-typescript makes of the published document', async () => {
    const { errors } = await typeCheck();
    expect(errors[PUBLISHED_TYPES] ?? []).toEqual([]);
  }, 300_000);

  it('refuses a handler whose result lacks fields, and a refusal not made by the catalogue', async () => {
    const errors = (await typeCheck()).errors['bad-handlers.ts'] ?? [];
    expect(
      errors.map((l) =>
        l
          .match(/^(.*?)\((\d+),/)!
          .slice(1)
          .join(':'),
      ),
    ).toEqual(['bad-handlers.ts:8', 'bad-handlers.ts:10']);
    expect(errors.join('\n')).toMatch(/authResponseCode/);
  }, 300_000);
});

// The published validators (payment-gateway-contract/validators/requests and /results) are read one
// by one: requiring the index compiles none of them, asking for one compiles that one's module alone,
// and it is then a plain property. Every name the declarations list is there, a function, and an ES
// module imports them by name. Each case runs in a Node process of its own, whose module cache is
// empty, as a server's is at its start.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

const run = async (args: string[]) =>
  JSON.parse((await promisify(execFile)(process.execPath, args, { cwd: ROOT })).stdout) as Record<string, unknown>;
const declared = (kind: string) =>
  [
    ...readFileSync(path.join(ROOT, `generated/validators/${kind}.d.cts`), 'utf8').matchAll(
      /export declare const (\w+):/g,
    ),
  ].map((m) => m[1]!);

/** What a fresh process sees when it requires the index of `kind`, then asks for `name`. */
const FIRST_USE = `
const kind = process.argv[1], name = process.argv[2];
const loaded = () => Object.keys(require.cache).filter((f) => f.includes('/generated/validators/' + kind + '/')).map((f) => f.split('/').pop());
const index = require('payment-gateway-contract/validators/' + kind);
const before = loaded();
const keys = Object.keys(index);
const functions = keys.filter((k) => typeof Object.getOwnPropertyDescriptor(index, k).get === 'function').length;
const first = index[name];
const after = loaded();
const again = index[name];
const own = Object.getOwnPropertyDescriptor(index, name);
console.log(JSON.stringify({ before, keys, functions, after, type: typeof first, same: first === again, plain: 'value' in own && own.get === undefined }));
`;

describe.each([
  ['requests', 'ProcessCardRequest'],
  ['results', 'AddCardResult'],
])('the %s validators', (kind, name) => {
  it(`are each compiled on first use: requiring the index reads none, asking for ${name} reads its module alone`, async () => {
    const seen = await run(['-e', FIRST_USE, kind, name]);
    expect(seen.before).toEqual([]);
    expect(seen.after).toEqual([`${name}.cjs`]);
    expect(seen.type).toBe('function');
    expect(seen.same).toBe(true);
    expect(seen.plain, 'a plain property once read').toBe(true);
    // Enumerated without being read: every declared name, each still to be read.
    expect(seen.keys).toEqual(declared(kind));
    expect(seen.functions).toBe(declared(kind).length);
  });

  it('stay as usable as the single module was: frozen, the index still reads; a validator may be replaced, before or after its first read', async () => {
    const seen = await run([
      '-e',
      `'use strict';
const [kind, name] = process.argv.slice(1);
const path = 'payment-gateway-contract/validators/' + kind;
const frozen = Object.freeze(require(path));
const read = typeof frozen[name];
delete require.cache[require.resolve(path)];
const index = require(path);
const names = Object.keys(index);
const [before, after] = [names[0], names[1]];
const original = index[after];
index[before] = () => 'before';
index[after] = () => 'after';
console.log(JSON.stringify({ read, again: typeof frozen[name], before: index[before](), after: index[after](), original: typeof original }));`,
      kind,
      name,
    ]);
    expect(seen).toEqual({
      read: 'function',
      again: 'function',
      before: 'before',
      after: 'after',
      original: 'function',
    });
  });

  it('has a module of its own for each declared name, and no other', () => {
    const files = readdirSync(path.join(ROOT, 'generated/validators', kind)).sort();
    expect(files).toEqual(
      declared(kind)
        .map((n) => `${n}.cjs`)
        .sort(),
    );
  });

  it('are imported by name from an ES module', async () => {
    const names = declared(kind);
    const code = `import { ${names.join(', ')} } from 'payment-gateway-contract/validators/${kind}';
console.log(JSON.stringify({ functions: [${names.join(', ')}].filter((f) => typeof f === 'function').length }));`;
    expect(await run(['--input-type=module', '-e', code])).toEqual({ functions: names.length });
  });
});

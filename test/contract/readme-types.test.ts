// The compiler holds the README, the guides and the handlers to the contract: every ```ts example of
// the README and of docs/*.md that imports the package type-checks against this checkout (the package's subpaths mapped to their
// sources), and a handler file that returns an incomplete result, or a refusal written as an object
// literal with a code of 0, fails `tsc` with the errors expected, where expected.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

let dir: string;
beforeAll(async () => {
  // Inside the checkout, so that node_modules and the sources resolve as they do for the project.
  dir = await mkdtemp(path.join(ROOT, 'test/.types-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The package's subpaths as the sources they are built from (exports: dist/x.d.ts → x.ts). */
async function packagePaths(): Promise<Record<string, string[]>> {
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
  const out: Record<string, string[]> = {};
  for (const [sub, target] of Object.entries<any>(pkg.exports)) {
    const file = typeof target === 'string' ? target : (target.types ?? target.default);
    if (typeof file !== 'string') continue;
    const source = file
      .replace(/^\.\/dist\//, './')
      .replace(/\.d\.ts$/, '.ts')
      .replace(/\.js$/, '.ts');
    out[`${pkg.name}${sub === '.' ? '' : sub.slice(1)}`] = [path.join(ROOT, source)];
  }
  return out;
}

/** Runs tsc over these files with the project's options; answers its output (empty when it passed). */
async function typeCheck(files: Record<string, string>): Promise<string> {
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  await writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: path.join(ROOT, 'tsconfig.json'),
      compilerOptions: { paths: await packagePaths(), noUnusedLocals: false },
      include: Object.keys(files).map((f) => path.join(dir, f)),
      // The project's tsconfig leaves these folders out of its own runs; this one is made of them.
      exclude: [],
    }),
  );
  const run = await promisify(execFile)(
    path.join(ROOT, 'node_modules/.bin/tsc'),
    ['-p', path.join(dir, 'tsconfig.json')],
    {
      cwd: ROOT,
    },
  ).then(
    () => ({ stdout: '' }),
    (error: { stdout: string }) => error,
  );
  return run.stdout.replaceAll(`${path.relative(ROOT, dir)}/`, '');
}

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
    const pages = [
      'README.md',
      ...(await readdir(path.join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
    ];
    const readme = (await Promise.all(pages.map((p) => readFile(path.join(ROOT, p), 'utf8')))).join('\n');
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)]
      .map((m) => m[1]!)
      .filter((b) => b.includes("from 'payment-gateway-contract"));
    expect(blocks.some((b) => b.includes("OperationResult<'getPayId'>"))).toBe(true);
    // Each example is a module of its own. The reader's own values (the passphrase, the merchant's
    // UUID and key) are names an example uses without declaring: declared here, as strings.
    const placeholders = ['passphrase', 'merchantUUID', 'apiKey'];
    const prelude = (b: string) =>
      placeholders
        .filter(
          (name) => new RegExp(`\\b${name}\\b`).test(b) && !new RegExp(`\\b(const|let|var)\\s+${name}\\b`).test(b),
        )
        .map((name) => `declare const ${name}: string;\n`)
        .join('');
    const files = Object.fromEntries(blocks.map((b, i) => [`readme-${i}.ts`, `${prelude(b)}${b}\nexport {};\n`]));
    expect(await typeCheck(files)).toBe('');
  });

  it('refuses a handler whose result lacks fields, and a refusal not made by the catalogue', async () => {
    const handlers = `import type { GatewayHandlers, HandlerContext } from 'payment-gateway-contract/server';
import { forms, refusalFields, refuse } from 'payment-gateway-contract/server';

type H = Pick<GatewayHandlers<HandlerContext>, 'processCard' | 'queryCard' | 'getSurcharge'>;

export const handlers: H = {
  // A purchase result without authResponseCode, authMessage and the custom echoes.
  processCard: () => ({ responseCode: '0', responseMessage: 'Transaction approved', transactionID: 'T-1', authCode: '1' }),
  // A refusal written by hand, with a code that is not below zero.
  queryCard: () => ({ responseCode: '0', responseMessage: 'No such transaction' }),
  // The catalogue's refusal: accepted.
  getSurcharge: () => refusalFields('string', refuse(-2, forms.invalid('cardID', 'no such card'))),
};
`;
    const out = await typeCheck({ 'bad-handlers.ts': handlers });
    const errors = out.split('\n').filter((l) => l.includes('error TS'));
    expect(
      errors.map((l) =>
        l
          .match(/^(.*?)\((\d+),/)!
          .slice(1)
          .join(':'),
      ),
    ).toEqual(['bad-handlers.ts:8', 'bad-handlers.ts:10']);
    expect(out).toMatch(/authResponseCode/);
  });
});

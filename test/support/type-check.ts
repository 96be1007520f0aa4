// One `tsc` run per test run for every type test: the project (tsconfig.json, whose files hold the
// type assertions of test/contract/types.test.ts), every ```ts example of the README and the guides
// that imports the package, the handler file that must fail (test/contract/readme-types.test.ts), and
// the types openapi-typescript makes of the published document, in one program. The two files used
// to run three compilations of mostly the same sources (the examples import them); each now reads
// its part of this one's output.
//
// The examples are compiled as readme-types.test.ts compiled them: with the project's options, the
// package's subpaths mapped to their sources (`paths`), which no project file imports by that name,
// so the mapping changes nothing for them; each example a module of its own.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { oncePerRun } from './once-per-run.ts';
import { tsc } from './tsc.ts';

/** The name the program's build info is kept under, from which the copies of the package start too. */
export const TYPES_CACHE = 'types';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** A handler file that must not type-check: a result that lacks fields, and a refusal not made by the catalogue. */
export const BAD_HANDLERS = `import type { GatewayHandlers, HandlerContext } from 'payment-gateway-contract/server';
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

/** The pages whose ```ts examples are compiled: the README and every guide. */
export async function examplePages(): Promise<string[]> {
  const guides = (await readdir(path.join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return ['README.md', ...guides];
}

/** Every ```ts block of those pages that imports the package. */
export async function exampleBlocks(): Promise<string[]> {
  const pages = await Promise.all((await examplePages()).map((p) => readFile(path.join(ROOT, p), 'utf8')));
  return [...pages.join('\n').matchAll(/```ts\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .filter((b) => b.includes("from 'payment-gateway-contract"));
}

/**
 * An example as a module of its own. The reader's own values (the passphrase, the merchant's UUID and
 * key) are names an example uses without declaring: declared here, as strings.
 */
function exampleModule(block: string): string {
  const prelude = ['passphrase', 'merchantUUID', 'apiKey']
    .filter(
      (name) => new RegExp(`\\b${name}\\b`).test(block) && !new RegExp(`\\b(const|let|var)\\s+${name}\\b`).test(block),
    )
    .map((name) => `declare const ${name}: string;\n`)
    .join('');
  return `${prelude}${block}\nexport {};\n`;
}

/** What a client team gets from openapi-typescript run on the published document, compiled with the rest. */
export const PUBLISHED_TYPES = 'published-types.ts';
async function publishedTypes(): Promise<string> {
  const shipped = JSON.parse(await readFile(path.join(ROOT, 'generated/openapi.json'), 'utf8'));
  return astToString(await openapiTS(shipped));
}

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

export interface TypeCheck {
  /** tsc's errors, each with its continuation lines, by file: relative to the checkout, the examples and the bad handlers by their own names (readme-N.ts, bad-handlers.ts). */
  errors: Record<string, string[]>;
  /** The example files compiled, by name. */
  examples: string[];
  /** tsc's output that names no file (options, globals), or how tsc failed to run. */
  other: string;
}

/** The one compilation of the run (see the head of this file), made by the first file to ask. */
export function typeCheck(): Promise<TypeCheck> {
  return oncePerRun('type-check', async () => {
    // Inside the checkout, so that node_modules and the sources resolve as they do for the project;
    // test/.types-* is left out of the project's own files, of biome and of git.
    const dir = await mkdtemp(path.join(ROOT, 'test/.types-'));
    try {
      const examples = (await exampleBlocks()).map((block, i) => [`readme-${i}.ts`, exampleModule(block)] as const);
      const files = [
        ...examples,
        ['bad-handlers.ts', BAD_HANDLERS] as const,
        [PUBLISHED_TYPES, await publishedTypes()] as const,
      ];
      for (const [name, text] of files) await writeFile(path.join(dir, name), text);
      // The project's include and exclude (inherited), and these files beside them (`files` are taken whatever exclude says).
      await writeFile(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({
          extends: path.join(ROOT, 'tsconfig.json'),
          compilerOptions: { paths: await packagePaths() },
          files: files.map(([name]) => path.join(dir, name)),
        }),
      );
      // Incremental (test/support/tsc.ts): a second run re-checks only what changed since the first.
      const output = await tsc({
        project: path.join(dir, 'tsconfig.json'),
        cache: TYPES_CACHE,
        args: ['--pretty', 'false'],
      });
      const ours = `${path.relative(ROOT, dir)}/`;
      const errors: Record<string, string[]> = {};
      let other = '';
      let last: string[] | undefined;
      for (const line of output.split('\n')) {
        const file = /^(\S[^(]*)\(\d+,\d+\): /.exec(line)?.[1];
        if (file) {
          const name = file.startsWith(ours) ? file.slice(ours.length) : file;
          last = errors[name] ?? [];
          errors[name] = last;
          last.push(line.replace(ours, ''));
        } else if (line.startsWith(' ') && last) last[last.length - 1] += `\n${line}`;
        else if (line.trim()) {
          other += `${line}\n`;
          last = undefined;
        }
      }
      return { errors, examples: examples.map(([name]) => name), other };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}

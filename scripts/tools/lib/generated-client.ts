// What the matrix checks of a code generator: its code typechecks with the package's own tsc
// (strict), and a small program calling the generated functions reaches the sandbox. The program is
// bundled with esbuild (the generators write `./x.js` imports of `.ts` files, which esbuild resolves
// and Node's type stripping does not) and run with the package's Node; it prints each call's
// responseCode as JSON.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { runCommand } from './tool.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const bin = (name: string) => path.join(ROOT, 'node_modules/.bin', name);

/** The operations each generated client calls: one body-signed, one header-signed. */
export const CALLED = ['processAuth', 'listPayIds'] as const;
export const SIGNED_REQUEST_MODULE = path.join(import.meta.dirname, 'signed.ts');

export interface ClientCheck {
  typeErrors: string[];
  /** operationId → the answer's responseCode (or the error the call ended in). */
  calls: Record<string, number | string>;
  messages: Record<string, string>;
}

export async function checkGeneratedClient(workDir: string, entry: string, driver: string): Promise<ClientCheck> {
  const typecheck = await runCommand(
    process.execPath,
    [
      bin('tsc'),
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--lib',
      'es2022,dom,dom.iterable',
      entry,
    ],
    { cwd: workDir },
  );
  const typeErrors = typecheck.output.split('\n').filter((line) => /error TS\d+/.test(line));
  if (typecheck.code !== 0 && !typeErrors.length) throw new Error(`tsc failed:\n${typecheck.output.slice(-2000)}`);

  const source = path.join(workDir, 'driver.ts');
  const bundle = path.join(workDir, 'driver.mjs');
  await writeFile(source, driver);
  await build({
    entryPoints: [source],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: bundle,
    logLevel: 'error',
  });
  const ran = await runCommand(process.execPath, [bundle], { cwd: workDir, timeoutMs: 60_000 });
  const last = ran.output.trim().split('\n').at(-1) ?? '';
  if (ran.code !== 0 || !last.startsWith('{'))
    throw new Error(`the calling program failed:\n${ran.output.slice(-2000)}`);
  return { typeErrors, ...JSON.parse(last) };
}

/**
 * The driver's common end: each call's responseCode and responseMessage, or what the call threw. An
 * answer a client hands back as a Blob (orval does for a response of several media types) is read as JSON.
 */
export const driverCalls = (calls: Record<string, string>) => `
const out: Record<string, number | string> = {};
const messages: Record<string, string> = {};
const read = async (a: any) => (a instanceof Blob ? JSON.parse(await a.text()) : a);
${Object.entries(calls)
  .map(
    ([id, call]) =>
      `try { const a: any = await read(await (async () => { ${call} })()); out[${JSON.stringify(id)}] = a?.responseCode !== undefined && a.responseCode !== '' && !Number.isNaN(Number(a.responseCode)) ? Number(a.responseCode) : \`no responseCode: \${JSON.stringify(a).slice(0, 300)}\`; messages[${JSON.stringify(id)}] = String(a?.responseMessage); } catch (e) { out[${JSON.stringify(id)}] = String(e); }`,
  )
  .join('\n')}
console.log(JSON.stringify({ calls: out, messages }));
`;

/**
 * A generator's report fields that its check decides: one check (the strict typecheck), the calls
 * that reached the sandbox, and the two lines of "works" that say so (`generated`: "SDK", "client").
 */
export function clientCheckReport(check: ClientCheck, generated: string) {
  const errors = check.typeErrors.length;
  return {
    checks: { passed: errors ? 0 : 1, failed: errors ? 1 : 0, skipped: 0 },
    operationsSucceeded: { succeeded: CALLED.filter((id) => check.calls[id] === 0).length, total: CALLED.length },
    typecheckLine: errors
      ? `tsc --strict: ${errors} errors (${check.typeErrors.slice(0, 2).join('; ')})`
      : `the generated ${generated} typechecks with tsc --strict`,
    calledLine: `called through it: ${CALLED.map((id) => `${id} → responseCode ${check.calls[id]} (${check.messages[id]})`).join(', ')}`,
  };
}

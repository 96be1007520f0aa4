// What test/contract/document.test.ts checks of the OpenAPI document, as functions that return what is
// wrong. Paths are taken from where this file is: a copy of the package checks itself by importing its
// own copy of this module (test/architecture/add-method.test.ts).
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The bundled document, generated/openapi.json. */
export const bundled = async (): Promise<any> =>
  JSON.parse(await readFile(path.join(ROOT, 'generated/openapi.json'), 'utf8'));

/** Redocly's problems with the document, as `npm run lint:spec` runs it (methods composed), one line each. */
export async function lintProblems(): Promise<string[]> {
  const output = await promisify(execFile)(
    process.execPath,
    [path.join(ROOT, 'scripts/lint-spec.ts'), '--format=json'],
    { cwd: ROOT, maxBuffer: 32 << 20, env: { ...process.env, REDOCLY_TELEMETRY: 'off' } },
  ).then(
    ({ stdout }) => stdout,
    (failure: { stdout: string }) => failure.stdout,
  );
  const { problems } = JSON.parse(output) as {
    problems: { severity: string; ruleId: string; message: string; location: { pointer: string }[] }[];
  };
  return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
}

/**
 * `redocly lint` on the document as shipped (generated/openapi.json, the form/XML media types and their
 * examples composed in), by the Redocly CLI with redocly.yaml (recommended-strict, examples checked, the
 * contract's rules): what a team that lints the contract it consumes meets. One line each.
 */
export async function bundleLintProblems(file = path.join(ROOT, 'generated/openapi.json')): Promise<string[]> {
  const output = await promisify(execFile)(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'),
      'lint',
      file,
      '--config',
      path.join(ROOT, 'redocly.yaml'),
      '--format=json',
      '--max-problems=100000',
    ],
    { cwd: ROOT, maxBuffer: 64 << 20, env: { ...process.env, REDOCLY_TELEMETRY: 'off' } },
  ).then(
    ({ stdout }) => stdout,
    (failure: { stdout: string; stderr: string }) => failure.stdout || failure.stderr,
  );
  let report: { problems: { severity: string; ruleId: string; message: string; location: { pointer: string }[] }[] };
  try {
    report = JSON.parse(output);
  } catch {
    return [`redocly lint did not report: ${output.trim().split('\n').slice(-3).join(' ')}`];
  }
  return report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
}

/** swagger-parser's verdict on the document as written (spec/) and as bundled: what it rejects. */
export async function swaggerProblems(): Promise<string[]> {
  const problems: string[] = [];
  const doc = await bundled();
  for (const [name, source] of [
    ['spec/openapi.yaml', path.join(ROOT, 'spec/openapi.yaml')],
    ['generated/openapi.json', structuredClone(doc)],
  ] as const)
    await SwaggerParser.validate(source as string).catch((error: Error) => problems.push(`${name}: ${error.message}`));
  if (doc.openapi !== '3.1.0') problems.push(`openapi is ${doc.openapi}, not 3.1.0`);
  return problems;
}

/** The operations that do not require the SVC-API-VERSION: 2.0 header. */
export async function unversionedOperations(): Promise<string[]> {
  const doc = await bundled();
  const missing: string[] = [];
  for (const [p, item] of Object.entries<any>(doc.paths)) {
    for (const [verb, op] of Object.entries<any>(item)) {
      const params = (op.parameters ?? []).map((x: any) =>
        x.$ref ? doc.components.parameters[x.$ref.split('/').pop()] : x,
      );
      const version = params.find((x: any) => x.name === 'SVC-API-VERSION');
      if (!(version?.in === 'header' && version.required === true && version.schema?.const === '2.0'))
        missing.push(`${verb} ${p}`);
    }
  }
  return missing;
}

/**
 * Keys no OpenAPI or JSON Schema document has, outside its examples: a name with a space or a keyword
 * set to null. YAML's flow mappings make them silently: `{description: Text, as it was.}` is a
 * description `Text` and a key `as it was.` set to null.
 */
export async function malformedKeys(file = path.join(ROOT, 'generated/openapi.json')): Promise<string[]> {
  const doc = JSON.parse(await readFile(file, 'utf8'));
  const found: string[] = [];
  const walk = (node: unknown, at: string, names = false): void => {
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      // Under properties a key is a field's name, which may be `examples`; elsewhere an example's values.
      if (!names && (key === 'example' || key === 'examples')) continue;
      const where = `${at}/${key}`;
      if (!Array.isArray(node) && (/\s/.test(key) || value === null)) found.push(`${where} = ${JSON.stringify(value)}`);
      walk(value, where, key === 'properties' && !names);
    }
  };
  walk(doc, '#');
  return found;
}

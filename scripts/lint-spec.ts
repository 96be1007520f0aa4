// npm run lint:spec [-- --format=json]: Redocly's lint (redocly.yaml: recommended-strict, examples
// checked, the contract's rules in lint/) over the document as it is read, the shared paths' method
// lists composed in (compose.ts), so every method's examples are checked against its schemas. The
// Redocly CLI reads files as they are on disk and cannot be given the composing resolver; this is the
// same library call with it. Exit status 1 on any problem (warnings included: the rule set is strict).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { formatProblems, getTotals, lint, loadConfig } from '@redocly/openapi-core';
import { ComposingResolver } from './generators/compose.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { format: { type: 'string', default: 'stylish' } } });
process.env.REDOCLY_TELEMETRY = 'off';

const config = await loadConfig({ configPath: path.join(ROOT, 'redocly.yaml') });
const problems = await lint({
  ref: path.join(ROOT, 'spec/openapi.yaml'),
  config,
  externalRefResolver: new ComposingResolver(ROOT),
});
const totals = getTotals(problems);
formatProblems(problems, {
  format: values.format as 'stylish' | 'json',
  totals,
  maxProblems: problems.length,
  version: 'openapi-core',
  cwd: ROOT,
  color: false,
});
if (problems.length) process.exitCode = 1; // not exit(): a piped report is written out first

// Every operation's PHP, Python, Ruby and C# sample, exactly as the docs embed it (the docs' own
// x-codeSamples, read from generated/docs), run against a started sandbox: each language on a fresh
// sandbox of its own, its samples in the operations' order. Each must get the answer the reference
// gets, the same request sent in TypeScript by the package's own signer (runtime/signing.ts) on a
// fresh sandbox of its own: the same responseCode and responseMessage (or the same file), so a
// sample that hashes by a wrong recipe, names a wrong header or drifts from the contract fails. The
// reference itself must be authenticated and complete (never -1 or -3). Each language's hash code
// is also held to generated/hash-vectors.json (preimage and hash). A language whose interpreter is
// missing is skipped with the reason. The matrix (operation × language × result) is printed and
// written to test-results/samples-matrix.md.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashRecipes } from '../../generated/hash-recipes.ts';
import { computeHash, messageHash, type HashRecipe } from '../../runtime/signing.ts';
import {
  renderers,
  SAMPLE_LANGUAGES,
  vectorProgram,
  type HashVector,
  type SampleLanguage,
} from '../../scripts/generators/samples/index.ts';
import { samplePlan, type RequestPlan } from '../../scripts/generators/samples/plan.ts';
import { exampleValue } from '../../scripts/lib/contract.ts';
import { ROOT, doc, operations } from '../support/contract.ts';
import { startSandbox } from '../sandbox/support.ts';
import { missingRunner, runProgram, runSamples, type SampleRun } from './sample-runners.ts';

const sampled = operations.filter((op) => !op.webhook);

/** The docs' samples of a language by operationId, read from the generated docs page. */
function docsSamples(language: SampleLanguage): { operationId: string; source: string }[] {
  const html = readFileSync(path.join(ROOT, 'generated/docs/index.html'), 'utf8');
  const definition = JSON.parse(html.match(/const __redoc_definition = (\{.*\});\n/)![1]!);
  const found = new Map<string, string>();
  for (const item of Object.values<Record<string, any>>(definition.paths))
    for (const op of Object.values<Record<string, any>>(item))
      for (const s of op?.['x-codeSamples'] ?? [])
        if (s.lang === renderers[language].lang) found.set(op.operationId, s.source);
  return sampled.map((op) => ({ operationId: op.operationId, source: found.get(op.operationId) ?? '' }));
}

/** An answer as the matrix and the comparison read it. */
type Outcome = { kind: 'file' } | { kind: 'json'; code: number; message: string } | { kind: 'broken'; why: string };

function outcomeOf(run: SampleRun): Outcome {
  if (run.error) return { kind: 'broken', why: run.error.split('\n').slice(0, 6).join(' | ') };
  if (run.out.subarray(0, 2).toString('latin1') === 'PK') return { kind: 'file' };
  try {
    const answer = JSON.parse(run.out.toString('utf8'));
    return { kind: 'json', code: Number(answer.responseCode), message: String(answer.responseMessage ?? '') };
  } catch {
    return { kind: 'broken', why: `not JSON: ${run.out.toString('utf8').slice(0, 200)}` };
  }
}

const describeOutcome = (o: Outcome) =>
  o.kind === 'file'
    ? 'file (zip)'
    : o.kind === 'broken'
      ? `broken: ${o.why}`
      : o.code === 0
        ? 'approved (0)'
        : o.code > 0
          ? `declined (${o.code})`
          : `refused ${o.code}: ${o.message}`;

/** The reference: the plan's request signed by runtime/signing.ts and sent by fetch. */
async function reference(plan: RequestPlan, base: string): Promise<Buffer> {
  const recipes = hashRecipes as Record<string, HashRecipe>;
  const passphrase = doc.info['x-sandbox'].passphrase as string;
  const body = plan.body ? structuredClone(plan.body) : undefined;
  const headers: Record<string, string> = Object.fromEntries(plan.headers.map((h) => [h.name, h.value]));
  for (const h of plan.hashes.filter((h) => h.in === 'body'))
    body![h.name] = computeHash(recipes[h.recipe]!, passphrase, body!);
  for (const h of plan.hashes.filter((h) => h.in === 'header'))
    headers[h.name] = messageHash(recipes[h.recipe]!, passphrase, { params: plan.params, body });
  if (body) headers['content-type'] = 'application/json';
  const answer = await fetch(base + plan.path, {
    method: plan.verb,
    headers,
    body: body ? JSON.stringify(body) : null,
  });
  return Buffer.from(await answer.arrayBuffer());
}

/**
 * How the reference answer stands to the operation's examples: its documented success, one of its
 * documented refusals, or another refusal (the example names a record a fresh sandbox does not hold).
 */
function againstExamples(op: (typeof sampled)[number]): string {
  const outcome = expected.get(op.operationId)!;
  if (outcome.kind !== 'json' || outcome.code >= 0) return "the example's success";
  const documented = (op.examples.refusal ?? []).some(
    (n) => (exampleValue(doc, n) as { responseMessage?: string }).responseMessage === outcome.message,
  );
  return documented ? 'a documented refusal' : 'not an example: a record the example names is not in a fresh sandbox';
}

const expected = new Map<string, Outcome>();
const matrix = new Map<string, Map<SampleLanguage, string>>();
const skipped = new Map<SampleLanguage, string>();
const started = Date.now();

beforeAll(async () => {
  const t = await startSandbox();
  try {
    for (const op of sampled) {
      const plan = samplePlan(op, doc)!;
      if (plan.token) {
        const token = JSON.parse((await reference(plan.token.request, t.base)).toString());
        plan.body![plan.token.field] = token[plan.token.field];
      }
      expected.set(op.operationId, outcomeOf({ out: await reference(plan, t.base) }));
    }
  } finally {
    await t.close();
  }
});

afterAll(() => {
  const header = `| operation | reference | against the spec's examples | ${SAMPLE_LANGUAGES.map((l) => renderers[l].label).join(' | ')} |`;
  const rows = sampled.map(
    (op) =>
      `| ${op.operationId} | ${describeOutcome(expected.get(op.operationId)!)} | ${againstExamples(op)} | ${SAMPLE_LANGUAGES.map((l) => matrix.get(op.operationId)?.get(l) ?? (skipped.has(l) ? 'skipped' : '–')).join(' | ')} |`,
  );
  const counts = SAMPLE_LANGUAGES.map((l) => {
    const cells = sampled.map((op) => matrix.get(op.operationId)?.get(l));
    const passed = cells.filter((c) => c === 'pass').length;
    const failed = cells.filter((c) => c !== undefined && c !== 'pass').length;
    return `- ${renderers[l].label}: ${passed} passed, ${failed} failed, ${skipped.has(l) ? `${sampled.length} skipped (${skipped.get(l)})` : '0 skipped'}`;
  });
  const text = [
    '# The docs samples against the sandbox',
    '',
    `Run ${new Date().toISOString()} by test/docs/samples-languages.test.ts, ${((Date.now() - started) / 1000).toFixed(1)} s (machine shared with other work).`,
    "`pass`: the sample got the reference's answer (same responseCode and responseMessage, or the same file).",
    '',
    ...counts,
    '',
    header,
    `|${'---|'.repeat(SAMPLE_LANGUAGES.length + 3)}`,
    ...rows,
    '',
  ].join('\n');
  mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
  writeFileSync(path.join(ROOT, 'test-results/samples-matrix.md'), text);
  console.log(counts.join('\n'));
});

describe("the reference answers to the samples' requests", () => {
  it('each is authenticated and complete: never -1 (credentials or hash) nor -3 (a missing header or field)', () => {
    for (const op of sampled) {
      const outcome = expected.get(op.operationId)!;
      expect(outcome.kind, `${op.operationId}: ${describeOutcome(outcome)}`).not.toBe('broken');
      if (outcome.kind === 'json')
        expect([-1, -3], `${op.operationId}: ${describeOutcome(outcome)}`).not.toContain(outcome.code);
    }
  });
});

// Each language on a sandbox of its own, so the languages run side by side.
describe.concurrent('the samples in the docs', () => {
  for (const language of SAMPLE_LANGUAGES) {
    const why = missingRunner(language);
    if (why) {
      skipped.set(language, why);
      it.skip(`${language}: ${why}`, () => {});
      continue;
    }

    it(`${language}: the hash code gives generated/hash-vectors.json's preimage and hash`, async () => {
      const vectors = JSON.parse(readFileSync(path.join(ROOT, 'generated/hash-vectors.json'), 'utf8'))
        .vectors as HashVector[];
      const printed = (await runProgram(language, vectorProgram(language, vectors), 'HashVectors'))
        .trimEnd()
        .split('\n');
      expect(printed.map((l) => l.split('\t'))).toEqual(vectors.map((v) => [v.preimage, v.hash]));
    }, 60_000);

    it(`${language}: every operation's sample gets the reference answer`, async () => {
      const samples = docsSamples(language);
      expect(
        samples.filter((s) => !s.source).map((s) => s.operationId),
        'operations without a sample',
      ).toEqual([]);
      const t = await startSandbox();
      const runs = await runSamples(language, samples, t.base).finally(() => t.close());
      const wrong: string[] = [];
      for (const { operationId } of samples) {
        const got = outcomeOf(runs.get(operationId)!);
        const want = expected.get(operationId)!;
        const pass = describeOutcome(got) === describeOutcome(want);
        if (!matrix.has(operationId)) matrix.set(operationId, new Map());
        matrix.get(operationId)!.set(language, pass ? 'pass' : `FAIL: ${describeOutcome(got)}`);
        if (!pass) wrong.push(`${operationId}: got ${describeOutcome(got)}, expected ${describeOutcome(want)}`);
      }
      expect(wrong).toEqual([]);
    }, 240_000);
  }
});

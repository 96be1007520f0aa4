// Every operation's PHP, Python, Ruby and C# sample, exactly as the docs embed it (the docs' own
// x-codeSamples, read from generated/docs), run against a started sandbox: each language on a fresh
// sandbox of its own, its samples in the operations' order. Each must get the answer the reference
// gets, the same request sent in TypeScript by the package's own signer (runtime/signing.ts) on a
// fresh sandbox of its own: the same responseCode and responseMessage (or the same file), so a
// sample that hashes by a wrong recipe, names a wrong header or drifts from the contract fails. The
// reference itself must be authenticated and complete (never -1 or -3), and, with the sample's steps
// sent first (the records its example names, which a fresh sandbox does not hold), must get the
// example's success: responseCode 0 or the file (UNREACHABLE says where a fresh sandbox cannot, and
// why). Each language's hash code
// is also held to generated/hash-vectors.json (preimage and hash). A language whose interpreter is
// missing is skipped with the reason. The matrix (operation × language × result) is printed and
// written to test-results/samples-matrix.md.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  renderers,
  SAMPLE_LANGUAGES,
  vectorProgram,
  type HashVector,
  type SampleLanguage,
} from '../../scripts/generators/samples/index.ts';
import { samplePlan, type SamplePlan } from '../../scripts/generators/samples/plan.ts';
import { afterSteps, sendPlan, UNREACHABLE } from '../../scripts/generators/samples/send.ts';
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

/** Whether an operation answers a file (a zip, a CSV) where it processes the request. */
const answersFile = (op: (typeof sampled)[number]) =>
  op.resultType !== undefined && op.resultType !== 'application/json';

function outcomeOf(run: SampleRun, file: boolean): Outcome {
  if (run.error) return { kind: 'broken', why: run.error.split('\n').slice(0, 6).join(' | ') };
  try {
    const answer = JSON.parse(run.out.toString('utf8'));
    return { kind: 'json', code: Number(answer.responseCode), message: String(answer.responseMessage ?? '') };
  } catch {
    if (file) return { kind: 'file' };
    return { kind: 'broken', why: `not JSON: ${run.out.toString('utf8').slice(0, 200)}` };
  }
}

const describeOutcome = (o: Outcome) =>
  o.kind === 'file'
    ? 'the file'
    : o.kind === 'broken'
      ? `broken: ${o.why}`
      : o.code === 0
        ? 'approved (0)'
        : o.code > 0
          ? `declined (${o.code})`
          : `refused ${o.code}: ${o.message}`;

const passphrase = doc.info['x-sandbox'].passphrase as string;

/** The reference with the plan's steps first: the request signed by runtime/signing.ts and sent by fetch. */
const withSteps = async (plan: SamplePlan, base: string): Promise<Buffer> =>
  sendPlan(await afterSteps(plan, base, passphrase), base, passphrase);

/** What the operation's examples say its request gets: the file, or the result example's responseCode. */
function exampleOutcome(op: (typeof sampled)[number]): string {
  if (answersFile(op)) return 'the file';
  const result = exampleValue(doc, op.examples.result![0]!) as { responseCode: string | number };
  return describeOutcome({ kind: 'json', code: Number(result.responseCode), message: '' });
}

/** How the reference answer stands to the operation's examples: its documented success, or why not. */
function againstExamples(op: (typeof sampled)[number]): string {
  const unreachable = UNREACHABLE[op.operationId];
  if (unreachable) return `not the example's success: ${unreachable.why}`;
  const got = describeOutcome(expected.get(op.operationId)!);
  return got === exampleOutcome(op) ? "the example's success" : `not the example's ${exampleOutcome(op)}`;
}

const expected = new Map<string, Outcome>();
const matrix = new Map<string, Map<SampleLanguage, string>>();
const skipped = new Map<SampleLanguage, string>();
const started = Date.now();

beforeAll(async () => {
  const t = await startSandbox();
  try {
    for (const op of sampled) {
      expected.set(op.operationId, outcomeOf({ out: await withSteps(samplePlan(op, doc)!, t.base) }, answersFile(op)));
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
    const reached = sampled.filter(
      (op) => matrix.get(op.operationId)?.get(l) === 'pass' && againstExamples(op) === "the example's success",
    ).length;
    return `- ${renderers[l].label}: ${passed} passed, ${failed} failed, ${skipped.has(l) ? `${sampled.length} skipped (${skipped.get(l)})` : '0 skipped'}; the example's success reached: ${reached}, another answer: ${passed - reached}`;
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
  it("each gets what the operation's examples say: its success (responseCode 0, or the file), but where UNREACHABLE says why not", () => {
    const wrong = sampled
      .map((op) => ({
        op,
        got: describeOutcome(expected.get(op.operationId)!),
        want: UNREACHABLE[op.operationId]?.answer ?? exampleOutcome(op),
      }))
      .filter(({ got, want }) => (got.startsWith('refused') ? got.split(':')[0] : got) !== want)
      .map(({ op, got, want }) => `${op.operationId}: got ${got}, expected ${want}`);
    expect(wrong).toEqual([]);
  });

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
      const printed = (await runProgram(language, vectorProgram(language, vectors, doc), 'HashVectors'))
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
        const got = outcomeOf(
          runs.get(operationId)!,
          answersFile(sampled.find((op) => op.operationId === operationId)!),
        );
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

// Reports of a contract run: a console summary by operation, JUnit XML and JSON.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { logSafe, logSafeLines } from '../runtime/log-line.ts';

export interface Result {
  operationId: string;
  tags: string[];
  kind: string;
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  reason?: string;
  ms: number;
  /** The check's id, what --only takes. */
  id?: string;
  /** A failure's last request as sent, a shell command that sends it again, and one that reruns the check. */
  request?: string;
  again?: string;
  replay?: string;
  /** Lines the check wrote under its reason (a model-based counterexample's steps), each printed on its own. */
  details?: string[];
}

/**
 * A result as every report shows it. Its reason and the request it quotes hold what a server sent:
 * card numbers are masked in any spelling and control, line-separator, bidirectional and non-text
 * characters escaped (runtime/log-line.ts, the one log writer's rules), so that the console keeps
 * its lines, the JSON file no card number and the JUnit file stays well-formed XML.
 */
function shown(r: Result): Result {
  const safe: Result = { ...r, operationId: logSafe(r.operationId), tags: r.tags.map(logSafe), kind: logSafe(r.kind) };
  safe.name = logSafe(r.name);
  if (r.reason !== undefined) safe.reason = logSafe(r.reason);
  if (r.request !== undefined) safe.request = logSafeLines(r.request);
  if (r.again !== undefined) safe.again = logSafe(r.again);
  if (r.replay !== undefined) safe.replay = logSafe(r.replay);
  if (r.details !== undefined) safe.details = r.details.map(logSafe);
  if (r.id !== undefined) safe.id = logSafe(r.id);
  return safe;
}

/** A failure, then what it sent and how to see it again. */
function failureLines(f: Result): string[] {
  const lines = [`    ✗ ${f.name}`, `      ${f.reason}`, ...(f.details ?? []).map((d) => `      ${d}`)];
  if (f.request) lines.push('      sent:', ...f.request.split('\n').map((l) => `        ${l}`));
  if (f.again) lines.push(`      again: ${f.again}`);
  if (f.replay) lines.push(`      replay: ${f.replay}`);
  return lines;
}

function byOperation(results: Result[]): Map<string, Result[]> {
  const byOp = new Map<string, Result[]>();
  for (const r of results) byOp.set(r.operationId, [...(byOp.get(r.operationId) ?? []), r]);
  return byOp;
}

export function summary(given: Result[], seconds: number, { quiet = false } = {}): string {
  const results = given.map(shown);
  const byOp = byOperation(results);
  const lines: string[] = [];
  for (const [op, list] of byOp) {
    const failed = list.filter((r) => r.status === 'failed');
    const skipped = list.filter((r) => r.status === 'skipped');
    const passed = list.length - failed.length - skipped.length;
    if (quiet && !failed.length) continue;
    lines.push(
      `${failed.length ? '✗' : '✓'} ${op.padEnd(34)} ${passed} passed${failed.length ? `, ${failed.length} failed` : ''}${skipped.length ? `, ${skipped.length} skipped` : ''}`,
    );
    for (const f of failed) lines.push(...failureLines(f));
    const reasons = [...new Set(skipped.map((s) => s.reason))];
    if (!quiet) for (const reason of reasons) lines.push(`    - skipped: ${reason}`);
  }
  const count = (s: Result['status']) => results.filter((r) => r.status === s).length;
  lines.push(
    '',
    `${byOp.size} operations, ${results.length} checks in ${seconds.toFixed(1)} s`,
    `contract: ${count('passed')} passed, ${count('failed')} failed, ${count('skipped')} skipped`,
  );
  return lines.join('\n');
}

const xml = (s: string) =>
  s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);

export function junit(results: Result[]): string {
  const byOp = byOperation(results.map(shown));
  const suites = [...byOp].map(([op, list]) => {
    const cases = list.map((r) => {
      const inner =
        r.status === 'failed'
          ? r.details?.length
            ? `<failure message="${xml(r.reason ?? '')}">${xml(r.details.join('\n'))}</failure>`
            : `<failure message="${xml(r.reason ?? '')}"/>`
          : r.status === 'skipped'
            ? `<skipped message="${xml(r.reason ?? '')}"/>`
            : '';
      return `    <testcase classname="${xml(op)}" name="${xml(`${r.kind}: ${r.name}`)}" time="${(r.ms / 1000).toFixed(3)}">${inner}</testcase>`;
    });
    const failures = list.filter((r) => r.status === 'failed').length;
    const skipped = list.filter((r) => r.status === 'skipped').length;
    return `  <testsuite name="${xml(op)}" tests="${list.length}" failures="${failures}" skipped="${skipped}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="payment-gateway-contract">\n${suites.join('\n')}\n</testsuites>\n`;
}

/**
 * Every fraction in the JSON report to a tenth (a run's seconds, a check's milliseconds): a number
 * written in full (0.6903947700000002) holds a run of digits of card length, one in ten of them
 * Luhn-valid, which the report would then seem to hold.
 */
const tenths = (_key: string, value: unknown) =>
  typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 10) / 10 : value;

export async function writeReports(
  results: Result[],
  files: { junit?: string | undefined; json?: string | undefined },
  meta: Record<string, unknown>,
): Promise<void> {
  for (const [file, content] of [
    [files.junit, junit(results)],
    // Times to a tenth of a millisecond: a time written in full (1405.2875696985996) can hold 13 to 19
    // digits that pass the Luhn check, and the report would then seem to hold a card number.
    [
      files.json,
      `${JSON.stringify({ ...meta, results: results.map((r) => ({ ...shown(r), ms: Math.round(r.ms * 10) / 10 })) }, tenths, 2)}\n`,
    ],
  ] as const) {
    if (!file) continue;
    await mkdir(path.dirname(path.resolve(file)), { recursive: true });
    await writeFile(file, content);
  }
}

// Time is data: the contract suite passes the sandbox at any hour. Both processes run under a pinned
// instant (libfaketime: their whole clock moved, the HTTP Date header included), spread over the
// week: a weekday morning; a Friday a minute before the 18:00 settlement cut-off (the run crosses
// it: its first transactions settle that Friday, its later ones on Monday); a weekday evening inside
// the window the evidence leaves (17:58:23 to 18:25:24); a Saturday afternoon; a Sunday night, ten
// seconds before Monday; and both nights the Sydney clocks change (the first Sunday of April, 03:00
// AEDT back to 02:00 AEST; the first Sunday of October, 02:00 AEST on to 03:00 AEDT), ten seconds
// before the change, so that the run crosses it. At each instant the full suite passes, every
// scenario runs (none skipped), and where the transactions settle on a later day than the run's
// today the settlement scenario moves its merchant's clock on through the control API, saying so.
// Skipped, saying why, where libfaketime is not installed (scripts/setup/faketime.sh installs it).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { instantOf, settlementDayAt, wallTime } from '../../runtime/gateway-time.ts';
import { settlementDates } from '../../generated/spec-constants.ts';
import type { Result } from '../../contract/report.ts';
import { ROOT } from '../support/contract.ts';
import { writeSample } from '../support/samples.ts';
import { clockAt, libfaketime, NO_FAKETIME } from '../support/faketime.ts';
import { startSandboxProcess, type SandboxProcess } from '../support/sandbox-process.ts';

const zone = settlementDates.zone;
/** Each instant, as Sydney's wall clock reads it, or as an instant where that wall time is ambiguous. */
const INSTANTS: { what: string; sydney?: string; at?: Date }[] = [
  { what: 'a weekday morning', sydney: '2026-11-25 10:00:00' },
  { what: 'a Friday a minute before the cut-off', sydney: '2026-11-27 17:59:00' },
  { what: 'a weekday evening inside the cut-off window', sydney: '2026-12-01 18:15:00' },
  { what: 'a Saturday afternoon', sydney: '2026-11-28 13:00:00' },
  { what: 'a Sunday night, into Monday', sydney: '2026-11-29 23:59:50' },
  // The clocks go back at 03:00 AEDT (16:00 UTC): 02:59:50 AEDT, ten seconds before.
  { what: 'the night the clocks go back', at: new Date('2027-04-03T15:59:50Z') },
  // The clocks go forward at 02:00 AEST (16:00 UTC): 01:59:50 AEST, ten seconds before.
  { what: 'the night the clocks go forward', at: new Date('2026-10-03T15:59:50Z') },
];

/** Whether the sandbox settles a transaction made at this instant on a later day than its own (in the zone). */
const settlesLater = (at: Date) => settlementDayAt(at, settlementDates) > wallTime(at, zone).slice(0, 10);

const library = libfaketime();

/** Sydney's name for its offset at an instant (AEDT, AEST): a time of the repeated hour needs it. */
const offsetName = (at: Date) =>
  new Intl.DateTimeFormat('en-AU', { timeZone: zone, timeZoneName: 'short' })
    .formatToParts(at)
    .find((p) => p.type === 'timeZoneName')!.value;

it('lists its instants in docs/SERVER-TEAMS.md', () => {
  const rows = INSTANTS.map((i) => {
    const at = i.at ?? instantOf(i.sydney!, zone);
    return `${wallTime(at, zone)} ${offsetName(at)}  ${at.toISOString()}  ${i.what}`;
  });
  writeSample('pinned-instants', rows.join('\n'));
});
const folder = await mkdtemp(path.join(os.tmpdir(), 'pgw-pinned-'));
const started: SandboxProcess[] = [];
afterAll(async () => {
  for (const s of started) s.child.kill('SIGKILL');
  await rm(folder, { recursive: true, force: true });
});

/** The contract suite's own process on the same moved clock, as a user runs it: its exit code, output and report. */
async function contractAt(clock: Record<string, string>, base: string, report: string) {
  const run = await promisify(execFile)(
    process.execPath,
    ['contract/run.ts', '--base-url', base, '--quiet', '--json', report, '--junit', `${report}.xml`],
    { cwd: ROOT, env: { ...process.env, ...clock }, maxBuffer: 16 * 1024 * 1024 },
  ).then(
    (done) => ({ code: 0, stdout: done.stdout, stderr: done.stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  const results = JSON.parse(await readFile(report, 'utf8')).results as Result[];
  return { ...run, results };
}

describe.skipIf(!library)(
  `the contract suite against the sandbox, both under a pinned instant${library ? '' : ` (skipped: ${NO_FAKETIME})`}`,
  () => {
    for (const [i, instant] of INSTANTS.entries()) {
      const at = instant.at ?? instantOf(instant.sydney!, zone);
      it(`${instant.what} (${wallTime(at, zone)} ${zone}, ${at.toISOString()})`, async () => {
        const clock = clockAt(library!, at);
        const sandbox = await startSandboxProcess({ ...clock, PGW_DB: ':memory:', PGW_SANDBOX_NPP_MS: '100' });
        started.push(sandbox);
        try {
          // The sandbox runs at the instant: its Date header says so (this test's own clock is not moved).
          const date = Date.parse((await fetch(`${sandbox.base}/openapi.json`)).headers.get('date') ?? '');
          expect(Math.abs(date - at.getTime()), 'the Date header of the pinned sandbox').toBeLessThan(30_000);
          const run = await contractAt(clock, sandbox.base, path.join(folder, `contract-${i}.json`));
          const failed = run.results.filter((r) => r.status === 'failed');
          expect(failed.map((r) => `${r.operationId}: ${r.name}: ${r.reason}`)).toEqual([]);
          expect(run.code, run.stdout + run.stderr).toBe(0);
          const scenarios = run.results.filter((r) => r.kind === 'scenario');
          expect(scenarios.filter((r) => r.status !== 'passed').map((r) => `${r.name}: ${r.reason}`)).toEqual([]);
          // Where transactions made from the instant to five minutes on settle on a later day, the
          // scenario moved its merchant's clock on to read their file; where none does, it did not.
          const moved = /getSettlement: the transactions settle on \S+, after the server's today/.test(run.stdout);
          const later = [settlesLater(at), settlesLater(new Date(at.getTime() + 300_000))];
          if (later.every(Boolean)) expect(moved, run.stdout).toBe(true);
          if (!later.some(Boolean)) expect(moved, run.stdout).toBe(false);
        } finally {
          sandbox.child.kill('SIGTERM');
        }
      });
    }
  },
);

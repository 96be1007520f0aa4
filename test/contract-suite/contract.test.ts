// The contract-test suite held to account: it passes the sandbox and the mock, and it catches a
// naive implementation and a buggy one, naming what each breaks.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { promisify } from 'node:util';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allChecks, runContract } from '../../contract/run.ts';
import { scenarioChecks } from '../../contract/scenarios.ts';
import { Coverage } from '../../contract/coverage.ts';
import { summary, type Result } from '../../contract/report.ts';
import { operations } from '../../generated/operations.ts';
import { startMock } from '../../mock/run.ts';
import { sharedPrism } from '../support/shared-servers.ts';
import { createSandbox } from '../../sandbox/index.ts';
import { buggySandbox, jsonToFormServer, naiveServer } from '../support/broken-gateways.ts';
import { sandboxCredentials } from '../support/contract.ts';

const creds = sandboxCredentials();
const servers: http.Server[] = [];
// One mock (the run's shared Prism behind a front of its own), and one run of the suite against it with --wire both
// for the two tests that read it: its JSON checks are the --mock run's (allChecks), its form/XML
// checks cover every form-mode operation. Prism's work per check is most of this file's time.
let mock: ReturnType<typeof startMock> | undefined;
let mockRun: Promise<Result[]> | undefined;
const againstTheMock = () =>
  (mockRun ??= (async () => {
    mock = sharedPrism().then((prism) => startMock({ port: 0, host: '127.0.0.1', prism }));
    return runContract({ base: (await mock).url, creds, mock: true, wire: 'both' });
  })());
// Started with the file, read by the two tests of the mock: the run mostly waits on Prism (another
// process), 40 s of this file's time, which the tests before it fill (it took 42.8 s of 74.2 s alone).
beforeAll(() => {
  againstTheMock().catch(() => undefined); // its tests fail with the reason
});
afterAll(async () => {
  await mockRun?.catch(() => undefined);
  await Promise.all(servers.map((x) => new Promise((r) => x.close(r))));
  await (await mock)?.close();
});
// A payout's NPP attempt pending 100 ms, not 2 s (PGW_SANDBOX_NPP_MS): the payout scenario still sees
// it end declined and the DE attempt begin, without waiting the rail's time out. The control API on,
// as `npm start` runs it: at an hour when captures settle on a later day, the settlement scenario
// moves its merchant's clock on to that day to read their file. A notification's post given 500 ms,
// not 5 s (PGW_NOTIFY_POST_TIMEOUT_MS): that move makes the attempts due of the notifications the run
// queued, to addresses that do not answer, and its answer waits as long as one post may take (the
// settlement scenario took 5.8 s, 1.2 s so); no check reads a delivery.
const sandbox = () =>
  createSandbox({
    dbPath: ':memory:',
    control: true,
    env: { ...process.env, PGW_SANDBOX_NPP_MS: '100', PGW_NOTIFY_POST_TIMEOUT_MS: '500' },
  });

async function serve(server: http.Server): Promise<string> {
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
const failed = (results: Result[]) => results.filter((r) => r.status === 'failed');
const failing = (results: Result[], operationId: string, kind: string) =>
  failed(results).filter((r) => r.operationId === operationId && r.kind === kind);

describe('npm run contract', () => {
  it('passes one operation replayed alone, again and again on one sandbox: refundPayIdTransaction builds the payment it refunds', async () => {
    // Two refunds of the spec example's PayID payment used it up: the third run (or any run of the
    // operation alone, as a failure's replay line runs it) found nothing left to refund.
    const base = await serve((await sandbox()).server());
    for (let run = 1; run <= 3; run++) {
      const results = await runContract({ base, creds, only: ['refundPayIdTransaction'] });
      expect(failed(results).map((r) => `run ${run}: ${r.name}: ${r.reason}`)).toEqual([]);
      expect(results.filter((r) => r.kind === 'state' && r.status === 'passed')).toHaveLength(1);
    }
  });

  it('passes the sandbox: every operation, every check in both wire formats, no failure; and reaches most documented answers', async () => {
    const base = await serve((await sandbox()).server());
    const coverage = new Coverage();
    // No --wire: what the spec says the server serves (x-wire-formats), JSON and the form/XML mode.
    const results = await runContract({ base, creds, coverage });
    const all = operations.map((o) => o.operationId);
    expect(coverage.percent(all)).toBeGreaterThan(85);
    expect(coverage.table(['processCard'])[0]).toMatchObject({ documented: [-3, -2, -1, 0, 4], missed: [4] });
    expect(coverage.cardsUsed()).toContain('456471…0004');
    expect(failed(results).map((r) => `${r.operationId}: ${r.name}: ${r.reason}`)).toEqual([]);
    expect(new Set(results.map((r) => r.operationId)).size).toBe(operations.length);
    expect(results.filter((r) => r.kind === 'scenario' && r.status === 'passed')).toHaveLength(scenarioChecks().length);
    // Every operation of the form-mode paths also checked form-encoded, its answers read as XML.
    const formChecks = results.filter((r) => r.name.endsWith('(form/XML)'));
    const formOps = operations.filter((o) => o.protocols.includes('form')).map((o) => o.operationId);
    expect(new Set(formChecks.map((r) => r.operationId))).toEqual(new Set(formOps));
    expect(formChecks.filter((r) => r.kind === 'example' && r.status === 'passed').length).toBeGreaterThan(40);
    // --wire json narrows the run to JSON on purpose; form to the form/XML mode.
    expect(allChecks('json').some((c) => c.wire === 'form')).toBe(false);
    expect(
      allChecks('form')
        .filter((c) => c.kind !== 'scenario' && c.kind !== 'state')
        .every((c) => c.wire === 'form'),
    ).toBe(true);
  });

  it('refuses a count or a bar it cannot use in one line, exit 2, before sending anything', async () => {
    // --concurrency 0 ran no worker and printed 'Cannot read properties of undefined'; 2.5 and 150 were taken.
    const cases: [string[], string][] = [
      [['--concurrency', '0'], "--concurrency takes a whole number above 0, not '0'"],
      [['--concurrency', '2.5'], "--concurrency takes a whole number above 0, not '2.5'"],
      [['--runs=-1'], "--runs takes a whole number above 0, not '-1'"],
      [['--seed', 'x'], "--seed takes a whole number, not 'x'"],
      [['--min-coverage', '150'], "--min-coverage takes a number from 0 to 100, not '150'"],
    ];
    // Five CLI runs, side by side (each a process that starts, reads its arguments and ends).
    const runs = await Promise.all(
      cases.map(([args]) =>
        promisify(execFile)(process.execPath, ['contract/run.ts', '--base-url', 'http://127.0.0.1:9', ...args], {
          cwd: path.resolve(import.meta.dirname, '../..'),
        }).then(
          (done) => ({ ...done, code: 0 }),
          (error) => error as { code: number; stdout: string; stderr: string },
        ),
      ),
    );
    for (const [i, [args, said]] of cases.entries()) {
      const run = runs[i]!;
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.trim()).toBe(`payment-gateway-contract-test: ${said}`);
    }
  });

  it('stops with one line naming the refused credential, exit 2, when given an API key the server does not know', async () => {
    const base = await serve((await sandbox()).server());
    const run = await promisify(execFile)(
      process.execPath,
      ['contract/run.ts', '--base-url', base, '--api-key', 'notthekey', '--quiet'],
      { cwd: path.resolve(import.meta.dirname, '../..') },
    ).then(
      (done) => ({ ...done, code: 0 }),
      (error) => error as { code: number; stdout: string; stderr: string },
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^payment-gateway-contract-test: the merchant credentials were refused \(getAccessToken as merchantUUID \w+: responseCode -1, .*--merchant-uuid, --api-key and --passphrase$/,
      ),
    ]);
  });

  it('passes the mock with --mock, skipping only what needs state, each with its reason', async () => {
    const results = await againstTheMock();
    // Every operation's JSON checks ran, as --mock alone runs them.
    const ids = (list: { id?: string; name: string }[]) =>
      list
        .filter((r) => !r.name.endsWith('(form/XML)'))
        .map((r) => r.id)
        .sort();
    expect(ids(results)).toEqual(ids(allChecks('json')));
    expect(failed(results).map((r) => `${r.operationId}: ${r.name}: ${r.reason}`)).toEqual([]);
    // What is skipped needs state (the scenarios, the success reached on state the suite built), or is
    // skipped against any server (an operation that carries no message hash has none to falsify).
    const skipped = results.filter((r) => r.status === 'skipped');
    const byReason = (kind: string) => [...new Set(skipped.filter((r) => r.kind === kind).map((r) => r.reason))];
    expect(new Set(skipped.map((r) => r.kind))).toEqual(new Set(['scenario', 'state', 'auth']));
    expect(byReason('scenario')).toEqual(['the mock keeps no state: scenarios need a stateful implementation']);
    expect(byReason('state')).toEqual(['the mock keeps no state']);
    expect(byReason('auth')).toEqual(['the operation carries no message hash']);
    // The stateless rules the mock keeps are checked: every credential and hash refusal, in both modes.
    const auth = results.filter((r) => r.kind === 'auth');
    expect(auth.filter((r) => r.status === 'passed').length).toBeGreaterThan(150);
    expect(auth.filter((r) => r.status === 'passed' && r.name.endsWith('(form/XML)')).length).toBeGreaterThan(50);
  });

  it('--wire both passes the mock: form requests get the example written in XML, refusals in XML', async () => {
    const results = await againstTheMock();
    expect(failed(results).map((r) => `${r.operationId}: ${r.name}: ${r.reason}`)).toEqual([]);
    expect(results.filter((r) => r.name.endsWith('(form/XML)') && r.status === 'passed').length).toBeGreaterThan(100);
  });

  it('fails a server that takes a form but answers JSON, naming the content type: by default, and with --wire form', async () => {
    const base = await serve(jsonToFormServer(await sandbox()));
    for (const wire of [undefined, 'form'] as const) {
      const results = await runContract({ base, creds, only: ['processCard', 'addCard'], ...(wire ? { wire } : {}) });
      const examples = failed(results).filter((r) => r.kind === 'example');
      expect(examples.length, `--wire ${wire ?? '(default)'}`).toBeGreaterThan(0);
      for (const r of examples)
        expect(r.reason).toMatch(
          /content type application\/json to a form request, the form mode answers application\/xml/,
        );
    }
  });

  it('catches a naive implementation: no refusal of invalid requests, no authentication', async () => {
    // The JSON mode's failures (the form mode's own is the test above).
    const results = await runContract({
      base: await serve(naiveServer()),
      creds,
      // The model-based sequences of captures bring in the authorisations they capture, as the
      // capture scenario does (no processAuth needed here).
      only: ['processCapture', 'createPayToPayment'],
      wire: 'json',
    });
    expect(
      failing(results, 'processCapture', 'invalid').some((r) =>
        /responseCode 0 .*a refusal is below 0/.test(r.reason!),
      ),
    ).toBe(true);
    expect(failing(results, 'processCapture', 'auth')).toHaveLength(2);
    expect(failing(results, 'createPayToPayment', 'auth')).toHaveLength(2);
    // the capture scenario and the model-based sequences
    expect(failing(results, 'processCapture', 'scenario')).toHaveLength(2);
  });

  it('catches a buggy one: over-capture, a key that never rotates, a result that drifted from its schema', async () => {
    const results = await runContract({
      base: await serve(await buggySandbox()),
      creds,
      only: ['Direct API', 'Token'],
      wire: 'json',
    });
    expect(
      failing(results, 'processCapture', 'scenario').find((r) => !r.name.startsWith('model-based'))!.reason,
    ).toMatch(/a capture of 40.01 on 40.00 was not refused/);
    expect(
      failing(results, 'processCapture', 'scenario').find((r) => r.name.startsWith('model-based'))!.details?.[0],
    ).toMatch(/^counterexample, the shortest failing sequence found \(seed \d+,/);
    expect(failing(results, 'tokenProcessCard', 'scenario')[0]!.reason).toMatch(/the old key was accepted/);
    expect(failing(results, 'getSurcharge', 'example')[0]!.reason).toMatch(
      /SurchargeResult: \/totalAmount must be string/,
    );
    expect(
      failed(results).every((r) => ['processCapture', 'tokenProcessCard', 'getSurcharge'].includes(r.operationId)),
    ).toBe(true);
    // --quiet (what .ci/run prints): the failing operations, each failure's reason, and the totals.
    const quiet = summary(results, 1, { quiet: true }).split('\n');
    expect(
      quiet
        .filter((l) => /^[✓✗] /.test(l))
        .map((l) => l.split(/\s+/)[1])
        .sort(),
    ).toEqual(['getSurcharge', 'processCapture', 'tokenProcessCard']);
    expect(quiet.join('\n')).toMatch(/a capture of 40.01 on 40.00 was not refused/);
    // The three bugs, the model-based sequences meeting the over-capture, and the key checked after a
    // declined purchase meeting the key that never rotates.
    expect(quiet.at(-1)).toMatch(/^contract: \d+ passed, 5 failed, \d+ skipped$/);
    expect(failing(results, 'tokenProcessCard', 'scenario').map((r) => r.reason)).toEqual([
      expect.stringMatching(/the old key was accepted: /),
      expect.stringMatching(/the old key was accepted after a declined purchase \(responseCode 4\)/),
    ]);
  });
});

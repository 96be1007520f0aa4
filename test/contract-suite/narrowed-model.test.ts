// Finding: `--only` on a few operations still ran the model-based check whole (it is processCapture's,
// and its sequences also drive the vault): `--only processCapture,refundCard` against a server
// without addCard failed it on addCard, and a run of the Direct API alone was not narrowed. The check
// now makes its sequences of the steps of the operations the run's --only/--skip select, with the
// steps that make what they work on (processAuth for a capture, addCard for a token purchase), as
// the scenarios make their state whatever --only says; it says what it leaves out and brings in, is
// skipped saying which option left every operation out, and its failure's replay: line leaves out
// what the run left out, so that it finds the same sequence, and runs it even where that is
// processCapture itself.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { Result } from '../../contract/report.ts';
import { MODEL_OPERATIONS, modelSteps } from '../../contract/model.ts';
import { runContract } from '../../contract/run.ts';
import { type Break, breaks, brokenSandbox } from '../support/broken-variants.ts';
import { sandboxCredentials } from '../support/contract.ts';
import { writeSample } from '../support/samples.ts';

const creds = sandboxCredentials();
const MODEL = 'processCapture/model-based-random-sequences-over-the-card-ledger-and-the-vault-keep-to-a-model-of-them';
const VAULT = ['addCard', 'tokenProcessCard', 'tokenProcessAuth', 'cardInfo', 'removeCard', 'changeExpiry'] as const;

/** A server that implements no vault operation (the stubs answer each "not implemented", HTTP 500). */
const vaultless = (also?: Break): Break => ({
  name: `a server without the vault${also ? `, and ${also.name}` : ''}`,
  kind: 'state',
  only: [],
  ...(also?.answer ? { answer: also.answer } : {}),
  handlers: () => Object.fromEntries(VAULT.map((op) => [op, undefined])),
});

async function run(
  b: Break,
  selection: { only?: string[]; skip?: string[]; seed?: number },
): Promise<{ results: Result[]; notes: string[] }> {
  const broken = await brokenSandbox(b);
  broken.server.listen(0, '127.0.0.1');
  await once(broken.server, 'listening');
  const notes: string[] = [];
  try {
    const results = await runContract({
      base: `http://127.0.0.1:${(broken.server.address() as AddressInfo).port}`,
      creds,
      wire: 'json',
      log: (line) => notes.push(line),
      ...selection,
    });
    return { results, notes };
  } finally {
    broken.server.close();
    broken.close();
  }
}

const model = (results: Result[]) => results.find((r) => r.id === MODEL);
const failures = (results: Result[]) => results.filter((r) => r.status === 'failed').map((r) => `${r.id}: ${r.reason}`);

describe('the model-based check, narrowed by --only and --skip', () => {
  it('runs the sequences of the operations selected on a server without the vault, saying what it leaves out', async () => {
    const { results, notes } = await run(vaultless(), { only: ['processCapture', 'processAuth', 'refundCard'] });
    expect(failures(results)).toEqual([]);
    expect(model(results)?.status).toBe('passed');
    expect(notes).toContain(
      'model-based sequences (processCapture): sent without processCard, processVoid, queryCard, addCard, tokenProcessCard, cardInfo, removeCard, which --only/--skip leave out',
    );
  });

  it('--skip Token runs the card ledger part, and the vault is not sent', async () => {
    const { results, notes } = await run(vaultless(), { only: [MODEL], skip: ['Token'] });
    expect(failures(results)).toEqual([]);
    expect(model(results)?.status).toBe('passed');
    expect(notes).toEqual([
      'model-based sequences (processCapture): sent without addCard, tokenProcessCard, cardInfo, removeCard, which --only/--skip leave out',
    ]);
    writeSample('contract-model-narrowed', notes[0]!);
  });

  it('--only processCapture runs the sequences of captures, with the authorisations they capture', async () => {
    // As processCapture's scenarios authorise whatever --only says: the check was skipped, and a run
    // had to name processAuth too.
    const { results, notes } = await run(vaultless(), { only: ['processCapture'] });
    expect(failures(results)).toEqual([]);
    expect(model(results)?.status).toBe('passed');
    expect(notes).toEqual([
      'model-based sequences (processCapture): sent without processCard, refundCard, processVoid, queryCard, addCard, tokenProcessCard, cardInfo, removeCard, which --only/--skip leave out; sent with processAuth (to make the authorisations processCapture works on)',
    ]);
    writeSample('contract-model-brought-in', notes[0]!);
  });

  it('brings in, for the steps selected, the operations that make what they work on, from the steps themselves', () => {
    const steps = (...ops: string[]) => Object.fromEntries(modelSteps((op) => ops.includes(op)));
    expect(steps('processCapture')).toEqual({
      processAuth: 'to make the authorisations processCapture works on',
      processCapture: undefined,
    });
    expect(steps('processVoid', 'processCard')).toEqual({ processCard: undefined, processVoid: undefined });
    expect(steps('processVoid')).toEqual({
      processAuth: 'to make the transactions processVoid works on',
      processVoid: undefined,
    });
    expect(steps('tokenProcessCard')).toEqual({
      addCard: 'to make the stored cards tokenProcessCard works on',
      tokenProcessCard: undefined,
    });
    expect(steps('removeCard')).toEqual({
      addCard: 'to make the stored cards removeCard works on',
      cardInfo: 'which removeCard sends too',
      removeCard: undefined,
    });
    expect(steps()).toEqual({});
    expect([...modelSteps().keys()]).toEqual([...MODEL_OPERATIONS]);
  });

  it('is skipped when --only/--skip leave out every operation of the sequences, saying which of them did', async () => {
    const skipped = await run(vaultless(), { only: [MODEL], skip: ['Direct API', 'Token'] });
    expect(model(skipped.results)).toMatchObject({
      status: 'skipped',
      reason:
        "the model-based sequences send processAuth, processCard, processCapture, refundCard, processVoid, queryCard, addCard, tokenProcessCard, cardInfo, removeCard, and --skip 'Direct API',Token leaves out every one of them: take one out of --skip to run them",
    });
    writeSample('contract-model-skipped', `- skipped: ${model(skipped.results)?.reason}`);
    const none = await run(vaultless(), { only: [MODEL, 'Partner'] });
    expect(model(none.results)?.reason).toMatch(
      /, and --only Partner selects none of them: add one to --only to run them$/,
    );
    const both = await run(vaultless(), { only: [MODEL, 'Token'], skip: ['addCard', 'Token'] });
    expect(model(both.results)?.reason).toMatch(
      /, and --only Token selects addCard, tokenProcessCard, cardInfo, removeCard of them, and --skip addCard,Token leaves those out: take one out of --skip to run them$/,
    );
  });

  it('replays a narrowed failure narrowed: its replay: line skips what the run left out, and finds the same sequence', async () => {
    const overCapture = breaks.find((b) => b.name === 'a capture beyond the authorisation approved')!;
    // processAuth brought in (it makes the authorisations captured): not skipped by the replay either.
    const first = await run(vaultless(overCapture), { only: ['processCapture'] });
    const failed = model(first.results)!;
    expect(failed.status).toBe('failed');
    expect(failed.details?.slice(1).join('\n')).toMatch(/^ {2}1\. auth \d+\.\d\d\n {2}2\. capture #0 /);
    expect(failed.replay).toMatch(
      / --only processCapture\/model-based-[a-z-]+ --skip processCard,refundCard,processVoid,queryCard,addCard,tokenProcessCard,cardInfo,removeCard --seed 20261122$/,
    );
    const [, only, skip, seed] = / --only (\S+) --skip (\S+) --seed (\d+)$/.exec(failed.replay!)!;
    const again = await run(vaultless(overCapture), { only: [only!], skip: skip!.split(','), seed: Number(seed) });
    expect(again.results.map((r) => r.id)).toEqual([MODEL]);
    expect(model(again.results)).toMatchObject({ status: 'failed', reason: failed.reason, details: failed.details });
  });

  it('a replay: line of a run that left processCapture itself out, run as printed, reruns the check and fails the same way', async () => {
    // --only <id>,Token: the sequences are the vault's, and the replay line skips the card ledger's
    // operations, processCapture among them; the check named by its id is not deselected by them.
    const noIvr = breaks.find((b) => b.name === 'addCard answers no ivrCardID')!;
    const broken = await brokenSandbox(noIvr);
    broken.server.listen(0, '127.0.0.1');
    await once(broken.server, 'listening');
    try {
      const base = `http://127.0.0.1:${(broken.server.address() as AddressInfo).port}`;
      const first = model(await runContract({ base, creds, wire: 'json', only: [MODEL, 'Token'] }))!;
      expect(first.status).toBe('failed');
      expect(first.replay).toMatch(
        / --only processCapture\/model-based-[a-z-]+ --skip processAuth,processCard,processCapture,refundCard,processVoid,queryCard --seed 20261122$/,
      );
      const dir = mkdtempSync(path.join(tmpdir(), 'pgw-replay-'));
      const json = path.join(dir, 'contract.json');
      // As a shell runs it (the replay line names the program as it runs here: npm run -s cli --).
      const ran = await promisify(execFile)('sh', ['-c', `${first.replay} --junit /dev/null --json ${json}`]).then(
        (done) => ({ code: 0, stdout: done.stdout }),
        (error: { code: number; stdout: string }) => error,
      );
      expect(ran.code, ran.stdout).toBe(1);
      const again = (JSON.parse(readFileSync(json, 'utf8')) as { results: Result[] }).results;
      expect(again.map((r) => r.id)).toEqual([MODEL]);
      expect(again[0]).toMatchObject({ status: 'failed', reason: first.reason, details: first.details });
    } finally {
      broken.server.close();
      broken.close();
    }
  });
});

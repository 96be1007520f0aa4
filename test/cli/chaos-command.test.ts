// payment-gateway chaos: the sandbox's chaos for an address set, summed up and stopped from the
// command line, against a sandbox whose "receiver" acknowledges everything (so it takes the stale and
// forged copies too: the summary names them, exit 1); and each mistake one line with exit 2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as chaos } from '../../cli/commands/chaos.ts';
import { createControlClient } from '../../sandbox/control-client.ts';
import { startSandbox, type TestSandbox } from '../sandbox/support.ts';
import { captured } from './captured.ts';

let t: TestSandbox;
beforeAll(async () => {
  t = await startSandbox({ control: true });
});
afterAll(() => t.close());

const cli = (args: string[]) => captured(chaos, [...args, '--base', t.base]);

describe('payment-gateway chaos', () => {
  it('sets chaos for an address, sums up its run (naming what the receiver took), and stops it', async () => {
    expect(await cli([])).toEqual({ code: 0, out: ['No chaos is set.'], err: [] });
    expect(
      await cli(['--notify-url', 'https://m.test/hooks', '--kinds', 'stale=1,duplicate=1', '--seed', '3']),
    ).toEqual({
      code: 0,
      out: ['Chaos on for https://m.test/hooks: duplicate=1,stale=1; seed 3 (--seed 3 repeats it)'],
      err: [],
    });
    await t.client.payouts.create({
      reference: 'CC-1',
      notifyURL: 'https://m.test/hooks',
      transactions: [
        { payee: { name: 'P' }, transaction: { reference: 'CC-1-0', amount: 1, bsb: '802950', accNumber: '123321' } },
      ],
    });
    await createControlClient({
      baseUrl: t.base,
      accountId: t.sandbox.seed.merchantUUID,
      apiKey: t.sandbox.seed.apiKey,
    }).completePayout('CC-1');
    await t.sandbox.notifier.deliverDue();
    const shown = await cli([]);
    expect(shown.code).toBe(1);
    expect(shown.out).toEqual([
      'Chaos for https://m.test/hooks:',
      '  Chaos summary (seed 3; duplicate=1,stale=1): 1 notification, 3 posts',
      '    genuine           1 sent: 1 2xx (expected 2xx)',
      '    duplicate         1 sent: 1 2xx (expected 2xx)',
      '    stale             1 sent: 1 2xx (expected 4xx)',
      '    answers dropped as timed out 0, held back 0, delayed 0 (up to 1000 ms)',
      '  1 problem:',
      expect.stringMatching(
        /^ {4}#\d+ payoutTransaction PTX-\w+: a stale copy \(a replay\) taken as real \(answered 204, expected 4xx\)$/,
      ),
    ]);
    const off = await cli(['--off', 'https://m.test/hooks']);
    expect(off.out[0]).toBe('Chaos off for https://m.test/hooks:');
    expect((await cli([])).out).toEqual(['No chaos is set.']);
  });

  it('refuses each mistake in one line, exit 2', async () => {
    for (const [args, message] of [
      [['--kinds', 'stale'], '--kinds needs --notify-url'],
      [['--notify-url', 'm.test'], "--notify-url needs an http(s) URL, not 'm.test'"],
      [
        ['--notify-url', 'https://m.test/', '--kinds', 'gremlins'],
        "--kinds: 'gremlins' is no kind of chaos; kinds: all, or any of duplicate, reorder, delay, stale, bad-signature, timeout, each as KIND or KIND=RATE",
      ],
      [
        ['--notify-url', 'https://m.test/', '--max-delay-ms', '20000'],
        "--max-delay-ms must be a whole number from 0 to 10000, not '20000'",
      ],
      [['--notify-url', 'https://m.test/', '--off', 'https://m.test/'], 'give --notify-url or --off, not both'],
    ] as const)
      expect(await cli([...args])).toEqual({
        code: 2,
        out: [],
        err: [`payment-gateway chaos: ${message} (see payment-gateway chaos --help)`],
      });
    expect(await cli(['--off', 'https://m.test/none'])).toEqual({
      code: 1,
      out: [],
      err: [
        `payment-gateway chaos: the sandbox at ${t.base} refused: Field 'notifyURL' is invalid: no chaos is set for this address`,
      ],
    });
  });
});

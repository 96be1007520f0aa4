// payment-gateway listen --chaos: a run of payout notifications forwarded under every kind of fault,
// to the correct receiver (each notification applied once, nothing forged or stale applied, no problem
// in the summary, exit 0) and to broken ones (the summary names what they took, exit 1); the same
// seed gives the same faults to the same sequence, another seed other faults.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as listen } from '../../cli/commands/listen.ts';
import { deliveryKey } from '../../notifications/index.ts';
import { createControlClient, type ControlClient } from '../../sandbox/control-client.ts';
import { startSandbox, type TestSandbox } from '../sandbox/support.ts';
import { startReceiver, type ReceiverKind } from '../notifications/receivers.ts';

let t: TestSandbox;
let control: ControlClient;
const N = 8;
const KINDS = 'duplicate=0.4,reorder=0.3,delay=0.3,stale=0.4,bad-signature=0.4,timeout=0.2';

beforeAll(async () => {
  t = await startSandbox({ control: true });
  control = createControlClient({
    baseUrl: t.base,
    accountId: t.sandbox.seed.merchantUUID,
    apiKey: t.sandbox.seed.apiKey,
  });
});
afterAll(() => t.close());

let payouts = 0;
/** N payout notifications queued at once (one payout of N transactions, its attempts ended now). */
async function notifications(): Promise<void> {
  const reference = `CHAOS-${++payouts}`;
  await t.client.payouts.create({
    reference,
    notifyURL: 'https://m.test/payouts',
    transactions: Array.from({ length: N }, (_, i) => ({
      payee: { name: `Payee ${i}` },
      transaction: { reference: `${reference}-${i}`, amount: 1, bsb: '802950', accNumber: '123321' },
    })),
  });
  await control.completePayout(reference);
}

/** listen --chaos to a receiver of this kind, while N notifications are queued: its exit code, lines and the receiver. */
async function underChaos(kind: ReceiverKind, seed: number) {
  const receiver = await startReceiver(kind, { passphrase: t.sandbox.seed.passphrase });
  const lines: string[] = [];
  let ready!: () => void;
  const forwarding = new Promise<void>((resolve) => (ready = resolve));
  const args = ['--forward-to', receiver.url, '--base', t.base, '--count', String(N), '--poll-seconds', '5'];
  const done = listen([...args, '--chaos', KINDS, '--seed', String(seed), '--max-delay-ms', '50'], {
    print: (line) => {
      lines.push(line);
      if (line.startsWith('Forwarding')) ready();
    },
  });
  await Promise.race([forwarding, done]);
  await notifications();
  const code = await done;
  await receiver.close();
  return { code, lines, receiver };
}

/** What each line did, without the ids and subjects that differ from run to run. */
const faults = (lines: string[]) =>
  lines
    .filter((l) => l.startsWith('#'))
    .map((l) => (/^#\d+ \[([^\]]+)\]/.exec(l)?.[1] ?? 'posted').replace(/\d+ ms/, 'N ms'));

describe('listen --chaos', () => {
  let first: Awaited<ReturnType<typeof underChaos>>;
  beforeAll(async () => {
    first = await underChaos('correct', 42);
  }, 120_000);

  it('to a correct receiver: every fault kind happens, each notification is applied once, nothing forged or stale is applied, no problem, exit 0', () => {
    const { code, lines, receiver } = first;
    expect(code, lines.join('\n')).toBe(0);
    const kinds = new Set(
      faults(lines).flatMap((f) => f.split(', ').map((x) => x.replace(/ \d+$/, '').replace(/ N ms$/, ''))),
    );
    for (const kind of [
      'held back',
      'bad-signature',
      'stale',
      'duplicate',
      'delayed',
      'timeout: answer dropped',
      'retry',
    ])
      expect(kinds, lines.join('\n')).toContain(kind);
    const keys = receiver.applied.map((n) => deliveryKey(n));
    expect(keys).toHaveLength(N);
    expect(new Set(keys).size).toBe(N);
    expect(lines.at(-1)).toMatch(/^No problems: every answer was the one expected/);
    expect(lines.find((l) => l.startsWith('Chaos summary'))).toMatch(
      new RegExp(
        `^Chaos summary \\(seed 42; ${KINDS.replace(/[.=]/g, (c) => `\\${c}`)}\\): ${N} notifications, \\d+ posts$`,
      ),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}bad-signature +\d+ sent: \d+ 4xx \(expected 4xx\)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}stale +\d+ sent: \d+ 4xx \(expected 4xx\)$/));
  });

  it('repeats its faults with the same seed on another run of the same notifications, and not with another seed', async () => {
    const again = await underChaos('correct', 42);
    expect(faults(again.lines)).toEqual(faults(first.lines));
    const other = await underChaos('correct', 43);
    expect(faults(other.lines)).not.toEqual(faults(first.lines));
  }, 120_000);

  for (const [kind, problem] of [
    ['acceptsStale', 'a stale copy (a replay) taken as real (answered 200, expected 4xx)'],
    ['acceptsBadSignature', 'a copy with a bad signature taken as real (answered 200, expected 4xx)'],
  ] as const)
    it(`names what a receiver that ${kind === 'acceptsStale' ? 'accepts a stale delivery' : 'accepts a bad signature'} took, exit 1`, async () => {
      const { code, lines } = await underChaos(kind, 42);
      expect(code).toBe(1);
      expect(lines).toContainEqual(expect.stringMatching(/^\d+ problems?:$/));
      expect(lines).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^ {2}#\\d+ payoutTransaction \\(payoutApproved\\): ${problem.replace(/[()]/g, (c) => `\\${c}`)}$`,
          ),
        ),
      );
    }, 120_000);

  it('refuses a mistake in its chaos options in one line, exit 2', async () => {
    for (const [args, message] of [
      [['--seed', '5'], '--seed needs --chaos'],
      [
        ['--chaos', 'gremlins'],
        "--chaos: 'gremlins' is no kind of chaos; kinds: all, or any of duplicate, reorder, delay, stale, bad-signature, timeout, each as KIND or KIND=RATE",
      ],
      [['--chaos', 'duplicate=2'], "--chaos: the rate of duplicate must be a number from 0 to 1, not '2'"],
      [['--chaos', '--seed', 'x'], "--seed must be a whole number, not 'x'"],
    ] as const) {
      const errors: string[] = [];
      const code = await listen(['--forward-to', 'http://127.0.0.1:9/hooks', '--base', t.base, ...args], {
        print: () => {},
        printError: (l) => errors.push(l),
      });
      expect([code, errors]).toEqual([2, [`payment-gateway listen: ${message} (see payment-gateway listen --help)`]]);
    }
  });
});

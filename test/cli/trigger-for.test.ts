// payment-gateway trigger EVENT --for ID [--set FIELD=VALUE], deliveries and resend against a sandbox
// with its control API on: what each prints, what the sandbox queued, and each mistake one line on
// stderr with exit 2 (a refusal of the sandbox: one line, exit 1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as deliveries } from '../../cli/commands/deliveries.ts';
import { run as resend } from '../../cli/commands/resend.ts';
import { run as trigger } from '../../cli/commands/trigger.ts';
import { payoutTimeZone } from '../../generated/spec-constants.ts';
import { kindOf, verifyNotification } from '../../notifications/index.ts';
import { instantsOf } from '../../runtime/gateway-time.ts';
import { createControlClient } from '../../sandbox/control-client.ts';
import { startSandbox, type TestSandbox } from '../sandbox/support.ts';
import { captured } from './captured.ts';

let t: TestSandbox;
const posted: { url: string; body: string; headers: Record<string, string> }[] = [];

beforeAll(async () => {
  t = await startSandbox({
    control: true,
    fetch: (async (url: string, init: RequestInit) => {
      posted.push({ url, body: String(init.body), headers: init.headers as Record<string, string> });
      return new Response(null, { status: url.endsWith('/down') ? 503 : 204 });
    }) as typeof fetch,
  });
  await t.client.payouts.create({
    reference: 'CLI-1',
    notifyURL: 'https://m.test/payouts',
    transactions: [
      { payee: { name: 'P' }, transaction: { reference: 'CLI-1-0', amount: 4, bsb: '802950', accNumber: '123321' } },
    ],
  });
  await createControlClient({
    baseUrl: t.base,
    accountId: t.sandbox.seed.merchantUUID,
    apiKey: t.sandbox.seed.apiKey,
  }).completePayout('CLI-1');
});
afterAll(() => t.close());

/** A command's run against the sandbox: its exit code, what it printed and its mistakes. */
const cli = (command: typeof trigger, args: string[]) => captured(command, [...args, '--base', t.base]);

describe('trigger EVENT --for ID', () => {
  it('payoutReturned for a payout: its transaction told as returned, signed over what was set', async () => {
    const r = await cli(trigger, ['payoutReturned', '--for', 'CLI-1']);
    expect(r).toMatchObject({ code: 0, err: [] });
    expect(r.out).toEqual([
      expect.stringMatching(
        /^payoutReturned for CLI-1: queued delivery #(\d+) \(payoutTransaction \S+, result\.payouts\.-1\.status=returned\) to https:\/\/m\.test\/payouts$/,
      ),
    ]);
    const sent = posted.at(-1)!;
    const verified = verifyNotification(sent.body, sent.headers, { passphrase: t.sandbox.seed.passphrase });
    expect(kindOf(verified.notification)).toBe('payoutReturned');
  });

  it('--set with a value typed as its field takes it, to another address', async () => {
    const r = await cli(trigger, [
      'payoutTransaction',
      '--for',
      'CLI-1-0',
      '--set',
      'result.payouts.-1.status=declined',
      '--notify-url',
      'https://m.test/other',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(posted.at(-1)!.body).result.payouts.at(-1).status).toBe('declined');
    expect(posted.at(-1)!.url).toBe('https://m.test/other');
  });

  it('refuses a field the spec does not let a trigger set, or a value its rule refuses: one line naming the field and the rule, exit 2, nothing sent', async () => {
    const before = posted.length;
    const cases: [string[], string][] = [
      [
        ['payoutTransaction', '--for', 'CLI-1', '--set', 'payoutId=PAY-1'],
        "--set payoutId: a payoutTransaction notification's payoutId cannot be set; these can: result.payouts.-1.status, result.payouts.-1.lastUpdated",
      ],
      [
        ['payoutTransaction', '--for', 'CLI-1', '--set', 'result.payouts.-1.status=bounced'],
        '--set result.payouts.-1.status: must be one of pending, approved, declined, returned, returnDeclined',
      ],
      [['directDebitOutcome', '--for', 'x', '--set', 'status'], "--set takes FIELD=VALUE, not 'status'"],
      [['payoutTransaction', '--set', 'a=b'], '--set needs --for ID'],
      [['payoutTransaction', '--for', ''], '--for needs the ID of an object the account has'],
      [
        ['chargeback', '--for', 'CLI-1'],
        'no event "chargeback" for --for; one of merchantCreated, directDebitOutcome, payoutTransaction, batchNotify, payoutApproved, payoutDeclined, payoutReturned, payoutReturnDeclined',
      ],
    ];
    for (const [args, message] of cases)
      expect(await cli(trigger, args)).toEqual({
        code: 2,
        out: [],
        err: [`payment-gateway trigger: ${message} (see payment-gateway trigger --help)`],
      });
    expect(posted).toHaveLength(before);
  });

  it("says in one line, exit 1, when the sandbox finds no such object of the account's", async () => {
    expect(await cli(trigger, ['batchNotify', '--for', 'NOPE'])).toEqual({
      code: 1,
      out: [],
      err: [`payment-gateway trigger: the sandbox at ${t.base} refused: Field 'for' is invalid: no such batch`],
    });
  });
});

describe('deliveries and resend', () => {
  it('lists the latest deliveries, each with its attempts; resends one as a new delivery that names it', async () => {
    const listed = await cli(deliveries, ['--latest', '2']);
    expect(listed.code).toBe(0);
    expect(listed.out).toEqual([
      expect.stringMatching(
        /^#\d+ payoutTransaction \(payoutReturned\) \S+ -> https:\/\/m\.test\/payouts: delivered; 204 at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(\d+ ms\)$/,
      ),
      expect.stringMatching(
        /^#\d+ payoutTransaction \(payoutDeclined\) \S+ -> https:\/\/m\.test\/other: delivered; 204 at /,
      ),
    ]);
    const id = /^#(\d+)/.exec(listed.out[0]!)![1]!;
    const again = await cli(resend, [id, '--to', 'https://m.test/down']);
    expect(again.code).toBe(0);
    expect(again.out).toEqual([
      expect.stringMatching(
        new RegExp(
          `^#\\d+ payoutTransaction \\(payoutReturned\\) \\S+ \\(resent #${id}\\) -> https://m\\.test/down: next attempt at \\S+ \\S+; 503 at `,
        ),
      ),
    ]);
    const json = await cli(deliveries, ['--latest', '1', '--json']);
    expect(JSON.parse(json.out.join('\n'))).toEqual([
      expect.objectContaining({ resentFrom: Number(id), delivered: false }),
    ]);
  });

  it('refuses a bad DELIVERY or --latest in one line, exit 2; an unknown delivery in one line, exit 1', async () => {
    for (const [command, args, message] of [
      [resend, [], 'name a DELIVERY (its number)'],
      [resend, ['abc'], "DELIVERY is a number, not 'abc'"],
      [resend, ['1', '--to', 'ftp://x'], "--to needs an http(s) URL, not 'ftp://x'"],
      [deliveries, ['--latest', '0'], "--latest must be a whole number above 0, not '0'"],
      [deliveries, ['--latest', '101'], "--latest must be at most 100, not '101'"],
    ] as const) {
      const name = command === resend ? 'resend' : 'deliveries';
      expect(await cli(command, [...args])).toEqual({
        code: 2,
        out: [],
        err: [`payment-gateway ${name}: ${message} (see payment-gateway ${name} --help)`],
      });
    }
    expect(await cli(resend, ['99999'])).toEqual({
      code: 1,
      out: [],
      err: [
        `payment-gateway resend: the sandbox at ${t.base} refused: Field 'id' is invalid: no such delivery of this account`,
      ],
    });
  });
});

describe('trigger payoutReturned --for a payout paid days before', () => {
  it("dates the return at the time it is told, on the account's clock: not the time the payout was paid", async () => {
    const { merchantUUID, apiKey } = t.sandbox.seed;
    const control = createControlClient({ baseUrl: t.base, accountId: merchantUUID, apiKey });
    const created = (await t.client.payouts.create({
      reference: 'CLI-2',
      notifyURL: 'https://m.test/payouts',
      transactions: [
        { payee: { name: 'P' }, transaction: { reference: 'CLI-2-0', amount: 4, bsb: '802950', accNumber: '123321' } },
      ],
    })) as { result: { payoutId: string } };
    await control.completePayout('CLI-2');
    const status = (await t.client.payouts.getTransactionStatus(created.result.payoutId, 'CLI-2-0')) as {
      result: { payouts: { status: string; createdAt: string; lastUpdated: string }[] };
    };
    const paid = status.result.payouts.at(-1)!;
    expect(paid.status).toBe('approved');
    // Two days later on the account's clock, the bank returns it.
    await control.advanceClock({ days: 2 });
    const instant = (wall: string) => Date.parse(`${wall.replace(' ', 'T')}Z`);
    const before = instant((await control.clock()).now);
    expect((await cli(trigger, ['payoutReturned', '--for', 'CLI-2-0'])).code).toBe(0);
    const after = instant((await control.clock()).now);
    const told = posted.filter((p) => JSON.parse(p.body).result?.transaction?.reference === 'CLI-2-0').at(-1)!;
    const attempt = JSON.parse(told.body).result.payouts.at(-1);
    expect(attempt).toMatchObject({ status: 'returned', createdAt: paid.createdAt });
    expect(attempt.lastUpdated).not.toBe(paid.lastUpdated);
    // Written in the payout zone (Australia/Sydney), to the second: one of its instants is the trigger's.
    expect(
      instantsOf(attempt.lastUpdated, payoutTimeZone).some((at) => at.getTime() >= before && at.getTime() <= after),
    ).toBe(true);
  });
});

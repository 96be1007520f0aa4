// The merchant-side notification check against three endpoints: one built on NotificationDispatcher
// (passes), one that takes anything (fails the refusals), one that answers repeats with 409 (fails
// the repeat and out-of-order checks).
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { checkNotificationEndpoint, run } from '../../cli/commands/check-notifications.ts';
import { NotificationDispatcher } from '../../notifications/index.ts';
import { MISTAKES, RECEIVER_KINDS, startReceiver, type ReceiverKind } from '../notifications/receivers.ts';

const servers: http.Server[] = [];
async function endpoint(
  answer: (raw: Buffer, headers: Record<string, string>) => Promise<number | [number, string]>,
): Promise<string> {
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const [status, body] = [await answer(Buffer.concat(chunks), req.headers as Record<string, string>)].flat();
    res.writeHead(status as number).end(body);
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}
afterAll(() => {
  for (const s of servers) s.close();
});

const dispatcherEndpoint = (onRepeat: number) => {
  const hooks = new NotificationDispatcher({ passphrase: 'merchant-secret', hashSalt: 'salt' });
  return endpoint(async (raw, headers) => {
    const outcome = await hooks.handle(raw, headers);
    return outcome.status === 'refused' ? 400 : outcome.status === 'duplicate' ? onRepeat : 200;
  });
};

describe('contract --notifications', () => {
  it('passes an endpoint that verifies with payment-gateway-contract/notifications', async () => {
    const url = await dispatcherEndpoint(200);
    const lines: string[] = [];
    expect(
      await run(['--notifications', url, '--passphrase', 'merchant-secret', '--hash-salt', 'salt'], {
        print: (l) => lines.push(l),
      }),
    ).toBe(0);
    expect(lines.at(-1)).toBe('23 passed, 0 failed');
    expect(lines).toContain(
      'pass  payoutTransaction: a declined notification dated before the returned one it follows is acknowledged (out of order) (expected 2xx, got 200)',
    );
  });

  it('fails an endpoint that takes anything, on every refusal it should have made', async () => {
    const url = await endpoint(async () => 200);
    const failed = (await checkNotificationEndpoint(url, { passphrase: 'merchant-secret' })).filter((c) => !c.ok);
    expect(failed.map((c) => `${c.webhook}: ${c.name}`).sort()).toEqual([
      'batchNotify: a notification signed with another passphrase is refused',
      'batchNotify: a notification whose batchUUID was changed after signing is refused',
      'directDebitOutcome: a notification signed with another passphrase is refused',
      'directDebitOutcome: a notification whose merchantUUID was changed after signing is refused',
      'merchantCreated: a notification dated 3600 s ago (a replay) is refused',
      'merchantCreated: a notification signed with another passphrase is refused',
      'merchantCreated: a notification whose requestReference was changed after signing is refused',
      'payoutTransaction: a notification dated 3600 s ago (a replay) is refused',
      'payoutTransaction: a notification signed with another passphrase is refused',
      'payoutTransaction: a notification whose payoutId was changed after signing is refused',
    ]);
  });

  it('fails an endpoint that answers a repeat with an error (the gateway would retry it for ever)', async () => {
    const url = await dispatcherEndpoint(409);
    const failed = (await checkNotificationEndpoint(url, { passphrase: 'merchant-secret', hashSalt: 'salt' })).filter(
      (c) => !c.ok,
    );
    expect(failed.map((c) => c.name)).toEqual(
      Array(4).fill('the same notification again is acknowledged (a gateway retry)'),
    );
  });

  it("says why a delivery was refused: the endpoint's own answer", async () => {
    // The README's example app: a dispatcher that was not told the hashSalt, answering its reason.
    const hooks = new NotificationDispatcher({ passphrase: 'merchant-secret' });
    const url = await endpoint(async (raw, headers) => {
      const outcome = await hooks.handle(raw, headers);
      return outcome.status === 'refused' ? [400, `refused: ${outcome.error.message}`] : 200;
    });
    const lines: string[] = [];
    expect(
      await run(['--notifications', url, '--passphrase', 'merchant-secret'], { print: (l) => lines.push(l) }),
    ).toBe(1);
    expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual([
      'FAIL  directDebitOutcome: a valid notification is acknowledged (expected 2xx, got 400: refused: A directDebitOutcome notification is signed with the hashSalt you sent; pass options.hashSalt)',
      'FAIL  directDebitOutcome: the same notification again is acknowledged (a gateway retry) (expected 2xx, got 400: refused: A directDebitOutcome notification is signed with the hashSalt you sent; pass options.hashSalt)',
    ]);
  });

  it('refuses bad usage in one line on stderr, exit 2', async () => {
    const out: string[] = [];
    const errors: string[] = [];
    expect(
      await run(['--notifications', 'http://127.0.0.1:1/'], {
        print: (l) => out.push(l),
        printError: (l) => errors.push(l),
      }),
    ).toBe(2);
    expect([out, errors]).toEqual([
      [],
      [
        'payment-gateway contract: --notifications needs an http(s) URL and --passphrase the passphrase it verifies with (see payment-gateway contract --help)',
      ],
    ]);
  });
});

// The endpoint check, scored: a correct receiver and one broken in each way receivers break in
// production (test/notifications/receivers.ts), each checked with its effects readable. The correct
// one passes every check; each broken one fails exactly the checks that describe its mistake.
describe('contract --notifications, scored against broken receivers', () => {
  const options = { passphrase: 'merchant-secret', hashSalt: 'salt' };
  const every = (...names: string[]) =>
    ['merchantCreated', 'directDebitOutcome', 'payoutTransaction', 'batchNotify'].flatMap((w) =>
      names.map((n) => `${w}: ${n}`),
    );
  const timed = (...names: string[]) =>
    ['merchantCreated', 'payoutTransaction'].flatMap((w) => names.map((n) => `${w}: ${n}`));
  const tampered = (w: string, field: string, what: string) =>
    `${w}: a notification whose ${field} was changed after signing ${what}`;
  const tamperedAll = (what: string) => [
    tampered('merchantCreated', 'requestReference', what),
    tampered('directDebitOutcome', 'merchantUUID', what),
    tampered('payoutTransaction', 'payoutId', what),
    tampered('batchNotify', 'batchUUID', what),
  ];
  const expected: Record<ReceiverKind, string[]> = {
    correct: [],
    acceptsBadSignature: [
      ...every('a notification signed with another passphrase is refused'),
      ...every('a notification signed with another passphrase is not handled'),
      ...tamperedAll('is refused'),
      ...tamperedAll('is not handled'),
    ],
    handlesDuplicateTwice: every('the same notification again is not handled again'),
    breaksOnReordering: [
      'payoutTransaction: a declined notification dated before the returned one it follows does not replace it',
    ],
    acceptsStale: timed(
      'a notification dated 3600 s ago (a replay) is refused',
      'a notification dated 3600 s ago (a replay) is not handled',
    ),
    answersBeforeVerifying: [
      ...every('a valid notification is handled by the time it is acknowledged'),
      ...every('a notification signed with another passphrase is refused'),
      ...tamperedAll('is refused'),
      ...timed('a notification dated 3600 s ago (a replay) is refused'),
    ],
    slow: [],
  };
  for (const kind of RECEIVER_KINDS) {
    it(kind === 'correct' ? 'passes the correct receiver' : `catches the receiver that ${MISTAKES[kind]}`, async () => {
      const receiver = await startReceiver(kind, { ...options, slowMs: 2500 });
      try {
        const checks = await checkNotificationEndpoint(receiver.url, {
          ...options,
          effects: receiver.effects,
          timeoutSeconds: 1,
        });
        const failed = checks.filter((c) => !c.ok).map((c) => `${c.webhook}: ${c.name}`);
        console.info(
          `${kind}: ${checks.length - failed.length} passed, ${failed.length} failed${failed.length ? `:\n  ${[...new Set(failed.map((f) => f.replace(/^\w+: /, '')))].join('\n  ')}` : ''}`,
        );
        if (kind === 'slow') {
          // Every answer comes after the gateway's time-out: it would be sent again and again.
          expect(failed).toEqual(
            expect.arrayContaining(every("every answer comes within the gateway's time-out (1 s)")),
          );
          expect(failed).toEqual(expect.arrayContaining(every('a valid notification is acknowledged')));
        } else expect(failed.sort()).toEqual(expected[kind].sort());
      } finally {
        await receiver.close();
      }
    }, 120_000);
  }
});

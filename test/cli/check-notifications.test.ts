// The merchant-side notification check against three endpoints: one built on NotificationDispatcher
// (passes), one that takes anything (fails the refusals), one that answers repeats with 409 (fails
// the repeat and out-of-order checks).
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { checkNotificationEndpoint, run } from '../../cli/commands/check-notifications.ts';
import { NotificationDispatcher } from '../../notifications/index.ts';

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
    expect(lines.at(-1)).toBe('19 passed, 0 failed');
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

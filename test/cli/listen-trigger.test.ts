// payment-gateway listen and trigger against a sandbox with its control API on, forwarding to a
// local endpoint that verifies what it gets with payment-gateway-contract/notifications.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as listen } from '../../cli/commands/listen.ts';
import { run as trigger } from '../../cli/commands/trigger.ts';
import { NotificationDispatcher } from '../../notifications/index.ts';
import { startSandbox, type TestSandbox } from '../sandbox/support.ts';
import { ROOT } from '../support/contract.ts';

let t: TestSandbox;
let endpoint: http.Server;
let hooks: string;
const received: { at: number; event: string; kind: string | undefined; status: string }[] = [];

beforeAll(async () => {
  t = await startSandbox({ control: true });
  const dispatcher = new NotificationDispatcher({ passphrase: t.sandbox.seed.passphrase, hashSalt: 'trigger' });
  endpoint = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const outcome = await dispatcher.handle(Buffer.concat(chunks), req.headers as Record<string, string>);
    const verified = outcome.status === 'refused' ? undefined : outcome.verified;
    received.push({
      at: performance.now(),
      event: verified?.notification.event ?? '?',
      kind: verified?.kind,
      status: outcome.status,
    });
    res
      .writeHead(outcome.status === 'refused' ? 400 : 200, { 'content-type': 'text/plain' })
      .end(outcome.status === 'refused' ? outcome.error.message : outcome.status);
  });
  endpoint.listen(0, '127.0.0.1');
  await once(endpoint, 'listening');
  hooks = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  await new Promise((r) => endpoint.close(r));
  await t.close();
});

/**
 * Starts `listen` and waits for its "Forwarding" line, printed once it has read where to start: a
 * notification queued from then on is forwarded. A fixed wait instead loses the race under load.
 */
async function listening(target: string, ...more: string[]): Promise<{ lines: string[]; done: Promise<number> }> {
  const lines: string[] = [];
  let ready!: () => void;
  const forwarding = new Promise<void>((resolve) => (ready = resolve));
  const args = ['--forward-to', target, '--base', t.base, '--count', '1', '--poll-seconds', '5', ...more];
  const done = listen(args, {
    print: (line) => {
      lines.push(line);
      if (line.startsWith('Forwarding')) ready();
    },
  });
  await Promise.race([forwarding, done]);
  return { lines, done };
}

describe('payment-gateway trigger and listen', () => {
  for (const [event, kind] of [
    ['payoutReturned', 'payoutReturned'],
    ['payoutReturnDeclined', 'payoutReturnDeclined'],
    ['directDebitOutcome', undefined],
    ['batchNotify', undefined],
  ] as const) {
    it(`trigger ${event}: listen forwards it, signed, and the local endpoint verifies it`, async () => {
      received.length = 0;
      const { lines, done } = await listening(hooks);
      const out: string[] = [];
      const started = performance.now();
      expect(await trigger([event, '--base', t.base], { print: (l) => out.push(l) })).toBe(0);
      expect(await done).toBe(0);
      expect(out[0]).toMatch(new RegExp(`^${event}: .* -> responseCode 0`));
      expect(received).toHaveLength(1);
      expect(received[0]).toMatchObject({ status: 'handled', kind });
      expect(lines.at(-1)).toMatch(
        new RegExp(`^#\\d+ \\w+${kind ? ` \\(${kind}\\)` : ''} .* -> POST ${hooks} -> 200 OK handled \\[\\d+ ms\\]$`),
      );
      console.log(`trigger ${event} -> local endpoint: ${Math.round(received[0]!.at - started)} ms`);
    });
  }

  it("listen --partner forwards merchantCreated, signed with the partner's passphrase", async () => {
    received.length = 0;
    const { done } = await listening(hooks, '--partner');
    expect(await trigger(['merchantCreated', '--base', t.base], { print: () => {} })).toBe(0);
    expect(await done).toBe(0);
    expect(received[0]).toMatchObject({ event: 'merchantCreated', status: 'handled' });
  });

  it("shows the endpoint's answer to a repeated notification: handled once, acknowledged as a duplicate", async () => {
    const { lines, done } = await listening(hooks.replace('/hooks', '/other'));
    // A notification for another merchant's passphrase cannot be made here; a repeat can: resend the last payout's.
    const payoutId = (await t.sandbox.store.get('SELECT id FROM payouts ORDER BY rowid DESC LIMIT 1'))!.id as string;
    await t.client.payouts.resendNotifications(payoutId);
    await done;
    expect(lines.at(-1)).toMatch(/-> 200 OK duplicate/);
  });

  it('refuses bad usage in one line on stderr with exit code 2, and answers --help with 0', async () => {
    const out: string[] = [];
    const errors: string[] = [];
    const to = { print: (l: string) => out.push(l), printError: (l: string) => errors.push(l) };
    expect(await listen([], to)).toBe(2);
    expect(await trigger(['chargeback'], to)).toBe(2);
    expect(await trigger([], to)).toBe(2);
    expect(out).toEqual([]);
    expect(errors).toEqual([
      'payment-gateway listen: --forward-to needs an http(s) URL, e.g. http://localhost:3000/hooks (see payment-gateway listen --help)',
      expect.stringMatching(
        /^payment-gateway trigger: no event "chargeback"; one of payoutTransaction, .* \(see payment-gateway trigger --help\)$/,
      ),
      expect.stringMatching(/^payment-gateway trigger: name an EVENT; one of /),
    ]);
    const help = execFileSync(process.execPath, ['cli/commands/trigger.ts', '--help'], { encoding: 'utf8' });
    expect(help).toContain('payment-gateway trigger EVENT');
    expect(execFileSync(process.execPath, ['cli/commands/listen.ts', '--help'], { encoding: 'utf8' })).toContain(
      '--forward-to URL',
    );
  });

  it('reads its options as every command does: one line and exit 2 for an unknown one, --version, the environment in --help', () => {
    const version = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
    for (const [command, name] of [
      ['cli/commands/listen.ts', 'payment-gateway listen'],
      ['cli/commands/trigger.ts', 'payment-gateway trigger'],
      ['cli/commands/check-notifications.ts', 'payment-gateway contract'],
    ] as const) {
      const wrong = spawnSync(process.execPath, [command, '--forward-too', 'x'], { cwd: ROOT, encoding: 'utf8' });
      expect(wrong.status).toBe(2);
      expect(wrong.stderr).toBe(`${name}: Unknown option '--forward-too' (see ${name} --help)\n`);
      expect(spawnSync(process.execPath, [command, '--version'], { cwd: ROOT, encoding: 'utf8' }).stdout).toBe(
        `${version}\n`,
      );
    }
    expect(
      execFileSync(process.execPath, ['cli/commands/listen.ts', '--help'], { cwd: ROOT, encoding: 'utf8' }),
    ).toMatch(/--base URL +the sandbox \(env PGW_SANDBOX_URL; default http:\/\/localhost:4010\)/);
    // An option's value forgotten before another option: node's parseArgs words it on three lines.
    const ambiguous = spawnSync(
      process.execPath,
      ['cli/commands/check-notifications.ts', '--notifications', '--help'],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    );
    expect([ambiguous.status, ambiguous.stdout]).toEqual([2, '']);
    expect(ambiguous.stderr).toMatch(
      /^payment-gateway contract: Option '--notifications' argument is ambiguous\. [^\n]+\n$/,
    );
  });

  it('says so when the control API is off', async () => {
    const off = await startSandbox({ control: false });
    try {
      const lines: string[] = [];
      expect(
        await listen(['--forward-to', hooks, '--base', off.base, '--count', '1'], {
          print: (l) => lines.push(l),
          printError: (l) => lines.push(l),
        }),
      ).toBe(1);
      expect(lines[0]).toMatch(/cannot reach the sandbox control API .* HTTP 404 \(is the control API on\?/);
    } finally {
      await off.close();
    }
  });
});

// The client teams' walkthrough (docs/CLIENT-TEAMS.md), its steps checked further than the guide walk does: the app, listen and trigger as processes of their own,
// against a sandbox with its control API on; then the purchase whose first answer is lost.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asInstalled } from '../../scripts/lib/as-installed.ts';
import { ROOT } from '../support/contract.ts';
import { startSandbox, type TestSandbox } from '../sandbox/support.ts';

const guide = readFileSync(path.join(ROOT, 'docs/CLIENT-TEAMS.md'), 'utf8');
let t: TestSandbox;
const children: ChildProcess[] = [];

/** Starts `node args…`, collecting its output; resolves when a line matches `until` (or it exits). */
function node(
  args: string[],
  env: Record<string, string> = {},
  until?: RegExp,
): { out: string[]; ready: Promise<string>; exited: Promise<number> } {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const out: string[] = [];
  let resolveReady: (line: string) => void;
  const ready = new Promise<string>((r) => (resolveReady = r));
  const exited = new Promise<number>((r) => child.on('exit', (code) => r(code ?? -1)));
  let rest = '';
  const take = (chunk: Buffer) => {
    rest += chunk.toString('utf8');
    const lines = rest.split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      out.push(line);
      if (until?.test(line)) resolveReady(line);
    }
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  void exited.then(() => resolveReady(''));
  return { out, ready, exited };
}

beforeAll(async () => {
  t = await startSandbox({ control: true });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill();
  await t.close();
});

describe("the client teams' walkthrough", () => {
  it('shows the example files as they are', () => {
    for (const example of ['examples/hooks-app.ts', 'examples/purchase-retry.ts', 'examples/error-handling.ts'])
      expect(guide).toContain(asInstalled(readFileSync(path.join(ROOT, example), 'utf8').trimEnd()));
  });

  it('a payout-returned notification reaches the app through listen, verified', async () => {
    for (const command of [
      'PORT=3000 npm run -s example:hooks',
      'npm run -s cli -- listen --forward-to http://127.0.0.1:3000/hooks',
      'npm run -s cli -- trigger payoutReturned',
    ])
      expect(guide).toContain(command);
    const app = node(['examples/hooks-app.ts'], { PORT: '0' }, /^hooks on /);
    const hooks = (await app.ready).replace('hooks on ', '');
    expect(hooks).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks$/);
    const listen = node(
      ['cli/commands/listen.ts', '--forward-to', hooks, '--base', t.base, '--count', '2'],
      {},
      /^Forwarding/,
    );
    await listen.ready;
    const trigger = node(['cli/commands/trigger.ts', 'payoutReturned', '--base', t.base]);
    expect(await trigger.exited).toBe(0);
    expect(trigger.out[0]).toMatch(
      /^payoutReturned: createPayouts TRIG-\w+ to BSB 802950 account 13131313; its attempts ended at once through the control API -> responseCode 0/,
    );
    // The same notification again (Resend Notifications): the app handles it once.
    const payoutId = (await t.sandbox.store.get('SELECT id FROM payouts ORDER BY rowid DESC LIMIT 1'))!.id as string;
    await t.client.payouts.resendNotifications(payoutId);
    expect(await listen.exited).toBe(0);
    expect(listen.out.filter((l) => l.startsWith('#'))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^#\\d+ payoutTransaction \\(payoutReturned\\) PTX-\\w+ -> POST ${hooks} -> 200 OK handled \\[\\d+ ms\\]$`,
        ),
      ),
      expect.stringMatching(/ -> 200 OK duplicate \[\d+ ms\]$/),
    ]);
    // Handlers of the webhook run first, then those of its kind; the repeat calls neither.
    expect(app.out).toEqual([
      `hooks on ${hooks}`,
      `payout ${payoutId}: returned`,
      expect.stringMatching(/^payout returned: TRIG-\w+-1, 1.5 to Trigger Payee$/),
    ]);
  }, 30_000);

  it('a purchase whose answer is lost is retried without a second charge', async () => {
    expect(guide).toContain('npm run -s example:purchase-retry');
    const purchase = node(['examples/purchase-retry.ts'], { GATEWAY_URL: t.base, ORDER: 'ORDER-1001' });
    expect(await purchase.exited).toBe(0);
    expect(purchase.out.filter(Boolean)).toEqual([
      'processCard: try 1 -> lookup',
      'processCard: try 2 -> recovered',
      'answer lost; queryCard found ORDER-1001: paid, not sent again',
    ]);
    expect(
      Number(
        (await t.sandbox.store.get(
          "SELECT count(*) AS n FROM transactions WHERE reference = 'ORDER-1001' AND kind = 'purchase'",
        ))!.n,
      ),
    ).toBe(1);
  }, 30_000);
});

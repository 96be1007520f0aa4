// The settlement scenario on a Saturday (Sydney), when what it makes settles on Monday: against a
// sandbox with its control API it moves its merchant's clock on to Monday, says so, and reads the
// file; against a server without a clock it may move, it skips, naming the day (a broken server that
// lists Monday's rows already still fails it: test/support/broken-variants.ts). What each prints is
// the sample in docs/SERVER-TEAMS.md.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { runContract } from '../../contract/run.ts';
import { instantOf } from '../../runtime/gateway-time.ts';
import { createSandbox, type RunningSandbox } from '../../sandbox/index.ts';
import { sandboxCredentials } from '../support/contract.ts';
import { writeSample } from '../support/samples.ts';

const SATURDAY = '2026-11-28 13:00:00';
const running: { sb: RunningSandbox; close: () => void }[] = [];
afterAll(async () => {
  for (const r of running) r.close();
  await Promise.all(running.map((r) => r.sb.close()));
});

/** A sandbox whose clock reads SATURDAY in Sydney, with or without the control API. */
async function saturdaySandbox(control: boolean): Promise<string> {
  const sb = await createSandbox({ dbPath: ':memory:', control, env: {} });
  sb.clock.advance(instantOf(SATURDAY, 'Australia/Sydney').getTime() - sb.clock.now().getTime());
  const server = sb.server();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  running.push({ sb, close: () => server.close() });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const only = [
  'getSettlement/the-settlement-file-lists-every-transaction-settled-on-its-days-each-once-with-its-amount-and-day',
];
/** Ports and the seconds a run happened to take, as the guide shows them. */
const asGuideShows = (line: string) =>
  line.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:4010').replace(/by \d+ s/, 'by … s');

it('on a sandbox, moves the merchant clock on to the day they settle, says so, and reads their file', async () => {
  const said: string[] = [];
  const base = await saturdaySandbox(true);
  const results = await runContract({ base, creds: sandboxCredentials(), only, log: (l) => said.push(l) });
  expect(results.map((r) => [r.status, r.reason])).toEqual([['passed', undefined]]);
  expect(said).toEqual([
    expect.stringMatching(
      /^getSettlement: the transactions settle on 2026-11-30, after the server's today \(2026-11-28 in Australia\/Sydney\): moved merchant \w+'s sandbox clock on by \d+ s \(control API\) to read their file$/,
    ),
  ]);
  writeSample('contract-clock-moved', asGuideShows(said[0]!));
});

it('against a server without a clock it may move, skips, naming the day', async () => {
  const base = await saturdaySandbox(false);
  const results = await runContract({ base, creds: sandboxCredentials(), only });
  expect(results.map((r) => r.status)).toEqual(['skipped']);
  expect(results[0]!.reason).toMatch(
    /^the transactions settle on 2026-11-30 \(their authSettledDate\), after the server's today/,
  );
  writeSample('contract-settlement-skipped', `- skipped: ${results[0]!.reason}`);
});

// payment-gateway logs: the account's own request log from the command line: each request with its
// outcome, a refusal with its explanation (a hash: its recipe and the text it was computed over, the
// passphrase a placeholder), --follow printing new ones until stopped, and each mistake one line with
// exit 2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as logs } from '../../cli/commands/logs.ts';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { scenarios } from '../../generated/scenarios.ts';
import { startSandbox, type TestSandbox } from '../sandbox/support.ts';
import { until } from '../support/until.ts';
import { captured } from './captured.ts';

let t: TestSandbox;
beforeAll(async () => {
  t = await startSandbox({ control: true });
});
afterAll(() => t.close());

const cli = (args: string[]) => captured(logs, [...args, '--base', t.base]);
async function purchase(extra: Record<string, unknown>, headers: Record<string, string> = {}, sign = true) {
  const body = { ...requestExamples(operation('processCard'))[0]!.value, ...extra };
  const r = buildRequest(operation('processCard'), { body, signBody: sign, headers });
  await fetch(t.base + r.url, { method: 'POST', headers: r.headers as never, body: r.body as string });
}

describe('payment-gateway logs', () => {
  it('prints each request with its outcome, and a refused hash with its recipe and the text hashed', async () => {
    expect(await cli([])).toEqual({ code: 0, out: ['No requests yet.'], err: [] });
    await purchase({ transactionReferenceID: 'CLI-1' });
    await purchase({ transactionReferenceID: 'CLI-2' }, { [scenarios.header]: 'insufficientFunds' });
    await purchase({ transactionReferenceID: 'CLI-3', hash: '0'.repeat(32) }, {}, false);
    const shown = await cli([]);
    expect(shown.code).toBe(0);
    expect(shown.out.join('\n').split('\n')).toEqual([
      expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} #1 POST \/post processCard 0 approved [\d.]+ms$/),
      expect.stringMatching(
        /^\d\d:\d\d:\d\d\.\d{3} #2 POST \/post processCard 5 declined \[scenario insufficientFunds\] [\d.]+ms$/,
      ),
      expect.stringMatching(
        /^\d\d:\d\d:\d\d\.\d{3} #3 POST \/post processCard -1 refused PGW_ERR_CREDENTIALS [\d.]+ms$/,
      ),
      '  check: hash, field hash',
      '  recipe transaction: md5(lower(md5(passphrase) + merchantUUID + transactionAmount + transactionCurrency)), or in its legacy form md5(lower(passphrase + merchantUUID + transactionAmount + transactionCurrency))',
      `  computed over: {md5(passphrase)}${t.sandbox.seed.merchantUUID}10.00aud`,
    ]);
    const refused = await cli(['--outcome', 'refused', '--json']);
    expect(refused.out.map((l) => JSON.parse(l).id)).toEqual([3]);
  });

  it('--follow prints the new requests as they come, until stopped', async () => {
    const stop = new AbortController();
    const out: string[] = [];
    const following = logs(['--follow', '--latest', '1', '--base', t.base], {
      print: (l) => out.push(l),
      printError: (l) => out.push(l),
      signal: stop.signal,
    });
    await until(() => out.length === 1, 10_000);
    await purchase({ transactionReferenceID: 'CLI-FOLLOW' }, { [scenarios.header]: 'expired' });
    await until(() => out.length === 2, 10_000);
    stop.abort();
    expect(await following).toBe(0);
    expect(out[1]).toMatch(/ processCard 4 declined \[scenario expired\] /);
  });

  it('a mistake is one line and exit 2', async () => {
    for (const args of [
      ['--outcome', 'lost'],
      ['--latest', '0'],
      ['--since', 'yesterday'],
    ]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).toHaveLength(1);
    }
  });
});

// The server guide's example (docs/SERVER-STUBS.md) is real: it is examples/surcharge-server.ts word for
// word (but for the import), and it answers a signed request over HTTP.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server } from '../../examples/surcharge-server.ts';
import { asInstalled } from '../../scripts/lib/as-installed.ts';
import { ROOT } from '../support/contract.ts';
import { onLoopback } from '../support/loopback.ts';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';

describe('docs/SERVER-STUBS.md: implementing GatewayHandlers', () => {
  let base: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ base, close } = await onLoopback(server));
  });
  afterAll(() => close());

  it('shows the example file exactly', () => {
    const readme = readFileSync(path.join(ROOT, 'docs/SERVER-STUBS.md'), 'utf8');
    const example = readFileSync(path.join(ROOT, 'examples/surcharge-server.ts'), 'utf8');
    expect(readme).toContain(asInstalled(example));
  });

  it('answers getSurcharge, and refuses what the contract refuses', async () => {
    const op = operation('getSurcharge');
    const ok = buildRequest(op, { body: requestExamples(op)[0]!.value });
    const answer = await (
      await fetch(base + ok.url, {
        method: 'POST',
        headers: ok.headers as Record<string, string>,
        body: ok.body as string,
      })
    ).json();
    expect(answer).toEqual({
      responseCode: '0',
      responseMessage: 'Operation successful',
      transactionAmount: '100.00',
      surchargeAmount: '1.50',
      totalAmount: '101.50',
    });
    const bad = buildRequest(op, { body: { ...requestExamples(op)[0]!.value, transactionAmount: '100' } });
    const refusal = await (
      await fetch(base + bad.url, {
        method: 'POST',
        headers: bad.headers as Record<string, string>,
        body: bad.body as string,
      })
    ).json();
    expect(refusal.responseCode).toBe('-2');
    expect(refusal.responseMessage).toMatch(/^Field 'transactionAmount' is invalid/);
  });
});

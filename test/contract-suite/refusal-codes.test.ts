// Where the suite expected a refusal and got another answer, its report names the refusal it
// expected by its stable code (docs/REFUSALS.md), so a server team can look up its message form and
// when the stubs make it. The wire has no code: the suite knows which refusal its request provokes.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { runContract } from '../../contract/run.ts';
import { breaks, brokenSandbox } from '../support/broken-variants.ts';
import { sandboxCredentials } from '../support/contract.ts';

/** The failure reasons of the suite's checks of processCapture against the sandbox with this break. */
async function reasons(breakName: string): Promise<string[]> {
  const broken = await brokenSandbox(breaks.find((b) => b.name === breakName)!);
  const server = broken.server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const results = await runContract({ base, creds: sandboxCredentials(), only: ['processCapture'] });
  server.close();
  await broken.close();
  return results.filter((r) => r.status === 'failed').map((r) => `${r.name}: ${r.reason}`);
}

it('a missing field refused -2: the report expects -3, PGW_ERR_FIELD_REQUIRED', async () => {
  const failed = await reasons('a missing field refused with -2 instead of -3');
  expect(failed.length).toBeGreaterThan(0);
  for (const reason of failed)
    expect(reason).toMatch(
      /^without \w+: refused \(-3\) naming it: responseCode -2, expected -3 \(PGW_ERR_FIELD_REQUIRED, docs\/REFUSALS\.md\): Field '\w+' is required$/,
    );
});

it('a wrong key refused -2: the report expects -1, PGW_ERR_CREDENTIALS', async () => {
  expect(await reasons('bad credentials refused with -2 instead of -1')).toContainEqual(
    expect.stringMatching(/^a wrong API key is refused with -1: responseCode -2, expected -1 \(PGW_ERR_CREDENTIALS, /),
  );
});

it("a broken field's refusal that is not one: the report names the rule's code", async () => {
  const failed = await reasons('a refusal answered with HTTP 500');
  expect(failed).toContainEqual(
    expect.stringMatching(
      /^with \w+ broken: refused \(-2\) naming it: HTTP 500: a refusal is never a 5xx; expected -2 \(PGW_ERR_FIELD_INVALID_[A-Z_]+, /,
    ),
  );
});

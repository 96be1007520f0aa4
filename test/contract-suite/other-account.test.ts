// The suite holds any correct server, whatever accounts it has: run with another account's credentials
// (a second merchant of the sandbox, with a partner of its own, other keys and another passphrase), it
// passes the sandbox as it does with the spec's x-sandbox accounts. Every account value it sends comes
// from its configuration: an example's merchantUUID or partnerUUID (the x-sandbox accounts') never
// reaches the server.
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runContract } from '../../contract/run.ts';
import type { Result } from '../../contract/report.ts';
import { createSandbox, type RunningSandbox } from '../../sandbox/index.ts';
import { sandboxCredentials } from '../support/contract.ts';

const other = {
  merchantUUID: '7a3c5e9b1d2f4',
  partnerUUID: '9e8d7c6b5a4f3',
  apiKey: 'otherkey',
  passphrase: 'another-passphrase',
};
const folder = await mkdtemp(path.join(os.tmpdir(), 'pgw-other-account-'));
const dbPath = path.join(folder, 'sandbox.db');
let sandbox: RunningSandbox | undefined;
let server: http.Server | undefined;
afterAll(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  await sandbox?.close();
  await rm(folder, { recursive: true, force: true });
});

it('passes the sandbox run with a second merchant and partner of its own credentials', async () => {
  // The store holds the second set alone, seeded by its first start with PGW_SANDBOX_* as a team that
  // runs its own accounts does (a database keeps the accounts it was made with): an x-sandbox account
  // the suite sent by mistake would be refused as unknown. The suite is given the second set only.
  sandbox = await createSandbox({
    dbPath,
    control: true,
    // As contract.test.ts's sandboxes: a payout's NPP attempt and a notification's post given little
    // time, which the payout and settlement scenarios would otherwise wait out.
    env: {
      PGW_SANDBOX_NPP_MS: '100',
      PGW_NOTIFY_POST_TIMEOUT_MS: '500',
      PGW_SANDBOX_MERCHANT_UUID: other.merchantUUID,
      PGW_SANDBOX_PARTNER_UUID: other.partnerUUID,
      PGW_SANDBOX_API_KEY: other.apiKey,
      PGW_SANDBOX_PASSPHRASE: other.passphrase,
    },
  });
  server = sandbox.server();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  expect(other.merchantUUID).not.toBe(sandboxCredentials().merchantUUID);

  const results: Result[] = await runContract({
    base,
    creds: {
      merchantUUID: other.merchantUUID,
      apiKey: other.apiKey,
      passphrase: other.passphrase,
      partnerUUID: other.partnerUUID,
      partnerApiKey: other.apiKey,
      partnerPassphrase: other.passphrase,
    },
  });
  expect(results.filter((r) => r.status === 'failed').map((r) => `${r.operationId}: ${r.name}: ${r.reason}`)).toEqual(
    [],
  );
  expect(results.filter((r) => r.kind === 'state' && r.status === 'passed').length).toBeGreaterThan(40);
});

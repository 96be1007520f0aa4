// A notification's delivery attempts are the store's, not an instance's: an instance started later on
// the same store (a restart, or another instance of a shared deployment) shows the same history, on
// SQLite and on PostgreSQL.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createControlClient } from '../../sandbox/control-client.ts';
import { freshDatabase, PG_URL, SKIP_PG, startSandbox } from './support.ts';
import { bankDebit } from '../support/requests.ts';

const folder = mkdtempSync(path.join(os.tmpdir(), 'pgw-history-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

async function historyAcrossInstances(dbPath: string) {
  const failing = (async () => new Response(null, { status: 500 })) as unknown as typeof fetch;
  const first = await startSandbox({ control: true, dbPath, fetch: failing });
  const control = (base: string) =>
    createControlClient({
      baseUrl: base,
      accountId: first.sandbox.seed.merchantUUID,
      apiKey: first.sandbox.seed.apiKey,
    });
  const debit = (await first.client.processDDebit(bankDebit('6.00') as never)) as { transactionID: string };
  await control(first.base).triggerNotification({
    event: 'directDebitOutcome',
    transactionID: debit.transactionID,
    notifyURL: 'https://m.test/down',
  });
  await first.sandbox.notifier.deliverDue();
  const [d] = (await control(first.base).deliveries()).deliveries.filter((x) => x.subject === debit.transactionID);
  expect(d!.attempts.map((a) => a.status)).toEqual([500]);
  await first.close();
  const second = await startSandbox({ control: true, dbPath, fetch: failing });
  try {
    expect((await control(second.base).delivery(d!.id)).delivery.attempts.map((a) => a.status)).toEqual([500]);
  } finally {
    await second.close();
  }
}

it('keeps the attempts across a restart and shows them on another instance (SQLite file)', () =>
  historyAcrossInstances(path.join(folder, 'sandbox.db')));

it.skipIf(!PG_URL)(`keeps them on PostgreSQL too${PG_URL ? '' : ` (${SKIP_PG})`}`, async () => {
  const db = await freshDatabase(PG_URL!);
  try {
    await historyAcrossInstances(db.url);
  } finally {
    await db.drop();
  }
});

// A sandbox instance with one rule broken: its read-check-writes are not atomic. Every transaction is
// dropped (fn runs with each statement committed on its own) and every read pauses 3 ms, so that
// another process's write falls between a handler's check and its write, as it would on a busy
// server. Started instead of sandbox/main.ts by test/support/instances.ts ({ broken: true }) to see
// the three-instance races fail: PGW_INSTANCES_BROKEN=1 npx vitest run test/sandbox/instances.test.ts
import { setTimeout as sleep } from 'node:timers/promises';
import { runCommand } from '../../cli/index.ts';
import * as stores from '../../sandbox/store.ts';

const PAUSE_MS = 3;
const pause = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, PAUSE_MS);

type Proto = Record<string, any>;
const noTransaction = function (this: unknown, fn: () => unknown) {
  return fn();
};

// The synchronous SQLite database (the handlers' store until they move to the async Store).
const sync = (stores as Record<string, any>).SqliteDatabase?.prototype as Proto | undefined;
if (sync) {
  sync.transaction = noTransaction;
  const get = sync.get;
  sync.get = function (this: unknown, ...args: unknown[]) {
    const row = get.apply(this, args);
    pause();
    return row;
  };
}

// The async stores (sandbox/store-sqlite.ts reads through the database above, so it pauses already).
const { SqliteStore } = await import('../../sandbox/store-sqlite.ts');
const { PostgresStore } = await import('../../sandbox/store-postgres.ts');
(SqliteStore.prototype as Proto).transaction = noTransaction;
const pgProto = PostgresStore.prototype as Proto;
pgProto.transaction = noTransaction;
const pgGet = pgProto.get;
pgProto.get = async function (this: unknown, ...args: unknown[]) {
  const row = await pgGet.apply(this, args);
  await sleep(PAUSE_MS);
  return row;
};

const { main } = await import('../../sandbox/main.ts');
await runCommand('payment-gateway-sandbox', () => main('payment-gateway-sandbox', process.argv.slice(2)));

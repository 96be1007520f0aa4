// A sandbox instance with one rule broken, started instead of sandbox/main.ts by
// test/support/instances.ts ({ broken: rule }) to see the three-instance checks fail:
// - transactions (PGW_INSTANCES_BROKEN=1): its read-check-writes are not atomic. Every transaction is
//   dropped (fn runs with each statement committed on its own) and every read pauses 3 ms, so that
//   another process's write falls between a handler's check and its write, as on a busy server.
// - at-most-once (PGW_INSTANCES_BROKEN=at-most-once): a notification is marked delivered when an
//   instance claims it, before it is posted (200 ms later): what a killed instance had claimed is
//   never sent.
// PGW_INSTANCES_BROKEN=1 npx vitest run test/sandbox/instances.test.ts
import { setTimeout as sleep } from 'node:timers/promises';
import { runCommand } from '../../cli-kit/index.ts';
import * as stores from '../../sandbox/store.ts';

const RULE = process.env.PGW_BROKEN_RULE ?? 'transactions';
const PAUSE_MS = 3;
const pause = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, PAUSE_MS);

type Proto = Record<string, any>;
const noTransaction = function (this: unknown, fn: () => unknown) {
  return fn();
};

// The synchronous SQLite database (the handlers' store until they move to the async Store).
const sync = (stores as Record<string, any>).SqliteDatabase?.prototype as Proto | undefined;
if (sync && RULE === 'transactions') {
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
const pgProto = PostgresStore.prototype as Proto;
if (RULE === 'transactions') {
  (SqliteStore.prototype as Proto).transaction = noTransaction;
  pgProto.transaction = noTransaction;
  const pgGet = pgProto.get;
  pgProto.get = async function (this: unknown, ...args: unknown[]) {
    const row = await pgGet.apply(this, args);
    await sleep(PAUSE_MS);
    return row;
  };
} else if (RULE === 'at-most-once') {
  // Each post leaves 200 ms after its claim (a slow DNS lookup, a busy instance), so that a kill
  // falls between claims and posts; the claim of sandbox/delivery-queue.ts marks it delivered as well.
  const send = globalThis.fetch;
  globalThis.fetch = (async (...args: Parameters<typeof fetch>) => {
    await sleep(200);
    return send(...args);
  }) as typeof fetch;
  for (const proto of [SqliteStore.prototype as Proto, pgProto]) {
    const run = proto.run;
    proto.run = function (this: unknown, sql: string, ...params: unknown[]) {
      return run.call(
        this,
        sql.replace(
          /^UPDATE notifications SET claimed_by = \?/,
          'UPDATE notifications SET delivered = 1, claimed_by = ?',
        ),
        ...params,
      );
    };
  }
} else throw new Error(`PGW_BROKEN_RULE: no broken rule ${RULE}`);

const { main } = await import('../../sandbox/main.ts');
await runCommand('payment-gateway-sandbox', () => main('payment-gateway-sandbox', process.argv.slice(2)));

// A sandbox instance with one rule broken, started instead of sandbox/main.ts by
// test/support/instances.ts ({ broken: rule }) to see the three-instance checks fail:
// - transactions (PGW_INSTANCES_BROKEN=1): its read-check-writes are not atomic. Every transaction is
//   dropped (fn runs with each statement committed on its own) and every read pauses 3 ms, so that
//   another process's write falls between a handler's check and its write, as on a busy server.
// - at-most-once (PGW_INSTANCES_BROKEN=at-most-once): a notification is marked delivered when an
//   instance claims it, before it is posted (a second later): what a killed instance had claimed is
//   never sent.
// PGW_INSTANCES_BROKEN=1 npx vitest run test/sandbox/instances.test.ts
import { setTimeout as sleep } from 'node:timers/promises';
import { runCommand } from '../../cli-kit/index.ts';

const RULE = process.env.PGW_BROKEN_RULE ?? 'transactions';
const PAUSE_MS = 3;

type Proto = Record<string, any>;
const noTransaction = function (this: unknown, fn: () => unknown) {
  return fn();
};

// The stores' own transactions (sandbox/store-sqlite.ts, store-postgres.ts).
const { SqliteStore } = await import('../../sandbox/store-sqlite.ts');
const { PostgresStore } = await import('../../sandbox/store-postgres.ts');
const sqliteProto = SqliteStore.prototype as Proto;
const pgProto = PostgresStore.prototype as Proto;
if (RULE === 'transactions') {
  // SQLite runs a write outside a transaction as a transaction of its own (statement → transaction):
  // that one is kept, so that each statement commits on its own; a handler's is dropped.
  const { statement, transaction } = sqliteProto;
  let ownStatement = false;
  sqliteProto.statement = function (this: unknown, ...args: unknown[]) {
    ownStatement = true;
    try {
      return statement.apply(this, args);
    } finally {
      ownStatement = false;
    }
  };
  sqliteProto.transaction = function (this: unknown, fn: () => unknown) {
    if (!ownStatement) return fn();
    ownStatement = false;
    return transaction.call(this, fn);
  };
  pgProto.transaction = noTransaction;
  for (const proto of [sqliteProto, pgProto]) {
    const get = proto.get;
    proto.get = async function (this: unknown, ...args: unknown[]) {
      const row = await get.apply(this, args);
      await sleep(PAUSE_MS);
      return row;
    };
  }
} else if (RULE === 'at-most-once') {
  // Each post leaves a second after its claim (a slow DNS lookup, a busy instance), so that a kill
  // falls between claims and posts: at 200 ms the kill, which follows an arrival, found the dead
  // instance between a batch's posts and its next claim in about half the runs. The claim of
  // sandbox/delivery-queue.ts marks it delivered as well.
  // (The notifier posts through node:http, pinned to the checked address, not through fetch: the
  // delay sits on its delivery, so it holds whatever the sender is.)
  const { Notifier } = await import('../../sandbox/notifier.ts');
  const notifierProto = Notifier.prototype as unknown as Proto;
  const deliver = notifierProto.deliver;
  notifierProto.deliver = async function (this: unknown, ...args: unknown[]) {
    await sleep(1_000);
    return deliver.apply(this, args);
  };
  for (const proto of [sqliteProto, pgProto]) {
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

// The reference implementation: a stateful sandbox of the whole gateway behind the validating stubs.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type http from 'node:http';
import {
  createGateway,
  createNodeServer,
  type Gateway,
  type GatewayHandlers,
  type HandlerContext,
  type Logger,
  type RequestRecord,
} from '../server-stubs/index.ts';
import { storeAccounts, seedAccounts, type AccountSeed } from './accounts.ts';
import { Clock } from './clock.ts';
import { sync as syncClock } from './clock-store.ts';
import { Control, controlAllowed } from './control.ts';
import type { Sandbox } from './context.ts';
import { DEFAULT_SURCHARGE_BP } from './data.ts';
import { BatchRunner, batchHandlers } from './handlers/batch.ts';
import { cardPaymentHandlers } from './handlers/card-payments.ts';
import { directDebitHandlers } from './handlers/direct-debit.ts';
import { notifyHandlers } from './handlers/notify.ts';
import { partnerHandlers } from './handlers/partner.ts';
import { payIdHandlers } from './handlers/payid.ts';
import { payoutsDue } from './handlers/payouts.ts';
import { paytoHandlers } from './handlers/payto.ts';
import { payoutHandlers } from './handlers/payouts.ts';
import { settlementHandlers } from './handlers/settlement.ts';
import { threeDSHandlers } from './handlers/three-ds.ts';
import { vaultHandlers } from './handlers/vault.ts';
import { guarded } from './guard.ts';
import { Notifier } from './notifier.ts';
import { policyFromEnv } from './url-policy.ts';
import { openStore, type Store } from './store.ts';
import { VaultCrypto } from './vault-crypto.ts';

/** The embedded store's class, for benches that bulk-load its file through node:sqlite directly. */
export type { SqliteStore } from './store-sqlite.ts';
export type { Store } from './store.ts';

const require = createRequire(import.meta.url);

export function loadSpec(): Record<string, any> {
  return JSON.parse(readFileSync(require.resolve('payment-gateway-contract/openapi.json'), 'utf8'));
}

/** Every operation of the contract; the type makes the compiler check that none is missing. */
export function sandboxHandlers(
  sb: Sandbox,
  batches: BatchRunner = new BatchRunner(sb),
): GatewayHandlers<HandlerContext> {
  return {
    ...cardPaymentHandlers(sb),
    ...vaultHandlers(sb),
    ...threeDSHandlers(sb),
    ...settlementHandlers(sb),
    ...directDebitHandlers(sb),
    ...batchHandlers(sb, batches),
    ...partnerHandlers(sb),
    ...paytoHandlers(sb),
    ...payIdHandlers(sb),
    ...payoutHandlers(sb),
    ...notifyHandlers(sb),
  };
}

/**
 * The vault key: PGW_SANDBOX_DATA_KEY (base64); else, for PostgreSQL, one key kept in the database
 * (made by the first instance, read back by every other: ON CONFLICT DO NOTHING); else a key file
 * beside the SQLite database, made once.
 */
async function vaultKey(dbPath: string, env: NodeJS.ProcessEnv, store: Store): Promise<Buffer | undefined> {
  if (env.PGW_SANDBOX_DATA_KEY) return Buffer.from(env.PGW_SANDBOX_DATA_KEY, 'base64');
  if (store.kind === 'postgres') {
    await store.run(
      "INSERT OR IGNORE INTO sandbox_keys (name, value) VALUES ('vault', ?)",
      randomBytes(32).toString('base64'),
    );
    return Buffer.from(
      (await store.get<{ value: string }>("SELECT value FROM sandbox_keys WHERE name = 'vault'"))!.value,
      'base64',
    );
  }
  if (dbPath === ':memory:') return undefined;
  const file = `${dbPath}.key`;
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  chmodSync(file, 0o600); // owner-only even when an older sandbox or a copy left it readable
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
}

export interface SandboxOptions {
  /** SQLite file, :memory:, or a postgres:// URL. Default: PGW_DB, else ./data/sandbox.db. */
  dbPath?: string;
  env?: NodeJS.ProcessEnv;
  /** How notifications are sent (tests record them). */
  fetch?: typeof fetch;
  logger?: Logger;
  /**
   * Serve the control API under /_sandbox/ (sandbox/control.openapi.yaml). Refused whatever is asked
   * when NODE_ENV=production or PGW_SANDBOX_CONTROL=off. Default off; npm start turns it on.
   */
  control?: boolean;
  /** Each answered request (the request log of `npm start`); none in tests unless given. */
  onRequest?: (record: RequestRecord) => void;
}

export interface RunningSandbox extends Sandbox {
  gateway: Gateway;
  seed: AccountSeed;
  /** The control API, when it is on. */
  control: Control | undefined;
  server(): http.Server;
  close(): Promise<void>;
}

/**
 * Operations run outside the gateway's unit of work: their long asynchronous parts (a batch file
 * inflated in slices, a settlement streamed from a snapshot) must not hold a transaction, and their
 * writes (processBatch's) run in a transaction of their own after every check has passed.
 */
const OUTSIDE_UNIT = new Set(['processBatch', 'getSettlement']);
/** How long close() waits for requests and background work under way before it closes the store anyway. */
const CLOSE_GRACE_MS = 10_000;

export async function createSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const env = options.env ?? process.env;
  const dbPath = options.dbPath ?? env.PGW_DB ?? './data/sandbox.db';
  const spec = loadSpec();
  const defaults = spec.info['x-sandbox'];
  const seed: AccountSeed = {
    merchantUUID: env.PGW_SANDBOX_MERCHANT_UUID ?? defaults.merchantUUID,
    partnerUUID: env.PGW_SANDBOX_PARTNER_UUID ?? defaults.partnerUUID,
    apiKey: env.PGW_SANDBOX_API_KEY ?? defaults.apiKey,
    passphrase: env.PGW_SANDBOX_PASSPHRASE ?? defaults.passphrase,
    ...(env.PGW_SANDBOX_PARTNER_NOTIFY_URL ? { partnerNotifyURL: env.PGW_SANDBOX_PARTNER_NOTIFY_URL } : {}),
  };
  const store = await openStore(dbPath);
  const clock = new Clock();
  let vault: VaultCrypto;
  try {
    vault = new VaultCrypto(await vaultKey(dbPath, env, store));
  } catch (error) {
    await store.close();
    throw error;
  }
  const policy = policyFromEnv(env);
  const send = options.fetch ?? fetch;
  // Every delivery attempt is kept in the store (delivery_attempts), for the control API of any instance.
  const notifier = new Notifier(
    store,
    clock,
    spec,
    ((url: string, init: RequestInit) => send(url, init)) as typeof fetch,
    policy,
  );
  await seedAccounts(store, clock, seed, DEFAULT_SURCHARGE_BP);
  await syncClock(store, clock);
  const sb: Sandbox = { store, clock, vault, notifier, spec };
  // Batches run in slices in the background; one left pending by a stop goes on from where it was.
  const batches = new BatchRunner(sb);
  batches.kick();
  batches.poll();
  // A payout transaction's notification is queued once its last attempt has ended on the sandbox clock.
  notifier.onRun(() => payoutsDue(sb));
  let handlers = sandboxHandlers(sb, batches);
  const control = controlAllowed(options.control ?? false, env).on ? new Control(sb, handlers) : undefined;
  if (control) {
    handlers = control.wrap(handlers);
  }
  const core = createGateway({
    handlers: guarded(handlers, spec, policy),
    accounts: storeAccounts(store, clock),
    transaction: (work, operationId) =>
      // The shared clock read first: another instance on the store may have moved it.
      OUTSIDE_UNIT.has(operationId)
        ? syncClock(store, clock).then(work)
        : store.transaction(async () => {
            await syncClock(store, clock);
            return work();
          }),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.onRequest ? { onRequest: options.onRequest } : {}),
  });
  // Requests under way, so that close() lets them finish before the store goes: a request that
  // outlived its client would otherwise run on into a closed pool.
  const inFlight = new Set<Promise<unknown>>();
  const respond: Gateway['respond'] = (request) => {
    const answer = core.respond(request);
    if (answer instanceof Promise) {
      inFlight.add(answer);
      void answer.finally(() => inFlight.delete(answer)).catch(() => {});
    }
    return answer;
  };
  const gateway: Gateway = { ...core, respond, handle: async (request) => respond(request) };
  return {
    ...sb,
    gateway,
    seed,
    control,
    server: () => {
      const server = createNodeServer(gateway);
      // / sends a browser to the docs; /_sandbox/ goes to the control API; every other path to the gateway.
      const gatewayListeners = server.listeners('request') as http.RequestListener[];
      server.removeAllListeners('request');
      server.on('request', (req, res) => {
        if ((req.method === 'GET' || req.method === 'HEAD') && (req.url === '/' || req.url === ''))
          return void res.writeHead(302, { location: '/docs' }).end();
        if (control?.handle(req, res)) return;
        for (const listener of gatewayListeners) listener(req, res);
      });
      return server;
    },
    close: async () => {
      const settled = Promise.allSettled([...inFlight, notifier.stop(), batches.stop()]);
      await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
      await store.close();
    },
  };
}

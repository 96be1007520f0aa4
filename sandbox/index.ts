// The reference implementation: a stateful sandbox of the whole gateway behind the validating stubs.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type http from 'node:http';
import { createGateway, createNodeServer, type Gateway, type GatewayHandlers, type HandlerContext, type Logger, type RequestRecord } from '../server-stubs/index.ts';
import { storeAccounts, seedAccounts, type AccountSeed } from './accounts.ts';
import { Clock } from './clock.ts';
import { Control, controlAllowed } from './control.ts';
import type { Sandbox } from './context.ts';
import { DEFAULT_SURCHARGE_BP } from './data.ts';
import { BatchRunner, batchHandlers } from './handlers/batch.ts';
import { cardPaymentHandlers } from './handlers/card-payments.ts';
import { directDebitHandlers } from './handlers/direct-debit.ts';
import { notifyHandlers } from './handlers/notify.ts';
import { partnerHandlers } from './handlers/partner.ts';
import { payIdHandlers } from './handlers/payid.ts';
import { paytoHandlers } from './handlers/payto.ts';
import { payoutHandlers } from './handlers/payouts.ts';
import { settlementHandlers } from './handlers/settlement.ts';
import { threeDSHandlers } from './handlers/three-ds.ts';
import { vaultHandlers } from './handlers/vault.ts';
import { guarded } from './guard.ts';
import { Notifier } from './notifier.ts';
import { policyFromEnv } from './url-policy.ts';
import { isPostgresUrl, SqliteDatabase as Store } from './store.ts';
import { VaultCrypto } from './vault-crypto.ts';

const require = createRequire(import.meta.url);

export function loadSpec(): Record<string, any> {
  return JSON.parse(readFileSync(require.resolve('payment-gateway-contract/openapi.json'), 'utf8'));
}

/** Every operation of the contract; the type makes the compiler check that none is missing. */
export function sandboxHandlers(sb: Sandbox, batches: BatchRunner = new BatchRunner(sb)): GatewayHandlers<HandlerContext> {
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

/** The vault key: PGW_SANDBOX_DATA_KEY (base64), else a key file beside the database, made once. */
function vaultKey(dbPath: string, env: NodeJS.ProcessEnv): Buffer | undefined {
  if (env.PGW_SANDBOX_DATA_KEY) return Buffer.from(env.PGW_SANDBOX_DATA_KEY, 'base64');
  if (dbPath === ':memory:') return undefined;
  const file = `${dbPath}.key`;
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  chmodSync(file, 0o600); // owner-only even when an older sandbox or a copy left it readable
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
}

export interface SandboxOptions {
  /** SQLite file, or :memory:. Default: PGW_DB, else ./data/sandbox.db. */
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
  close(): void;
}

/**
 * The handlers still call the synchronous SQLite store: a PostgreSQL address is refused in one line
 * rather than taken for a file name (the async Store of sandbox/store.ts serves it once they move).
 */
export function checkSandboxDatabase(db: string): void {
  if (isPostgresUrl(db)) throw new Error('PGW_DB: the sandbox does not serve PostgreSQL yet (its handlers run on the embedded SQLite store); give an SQLite file or :memory:');
}

export function createSandbox(options: SandboxOptions = {}): RunningSandbox {
  const env = options.env ?? process.env;
  const dbPath = options.dbPath ?? env.PGW_DB ?? './data/sandbox.db';
  checkSandboxDatabase(dbPath);
  const spec = loadSpec();
  const defaults = spec.info['x-sandbox'];
  const seed: AccountSeed = {
    merchantUUID: env.PGW_SANDBOX_MERCHANT_UUID ?? defaults.merchantUUID,
    partnerUUID: env.PGW_SANDBOX_PARTNER_UUID ?? defaults.partnerUUID,
    apiKey: env.PGW_SANDBOX_API_KEY ?? defaults.apiKey,
    passphrase: env.PGW_SANDBOX_PASSPHRASE ?? defaults.passphrase,
    ...(env.PGW_SANDBOX_PARTNER_NOTIFY_URL ? { partnerNotifyURL: env.PGW_SANDBOX_PARTNER_NOTIFY_URL } : {}),
  };
  const store = new Store(dbPath);
  const clock = new Clock();
  const vault = new VaultCrypto(vaultKey(dbPath, env));
  const policy = policyFromEnv(env);
  const send = options.fetch ?? fetch;
  // The control API records every delivery attempt: the notifier sends through whatever `post` is.
  let post: typeof fetch = send;
  const notifier = new Notifier(store, clock, spec, ((url: string, init: RequestInit) => post(url, init)) as typeof fetch, policy);
  seedAccounts(store, clock, seed, DEFAULT_SURCHARGE_BP);
  const sb: Sandbox = { store, clock, vault, notifier, spec };
  // Batches run in slices in the background; one left pending by a stop goes on from where it was.
  const batches = new BatchRunner(sb);
  batches.kick();
  let handlers = sandboxHandlers(sb, batches);
  const control = controlAllowed(options.control ?? false, env).on ? new Control(sb, handlers) : undefined;
  if (control) {
    post = control.recording(send);
    handlers = control.wrap(handlers);
  }
  const gateway = createGateway({ handlers: guarded(handlers, spec, policy), accounts: storeAccounts(store, clock), transaction: (work) => store.transaction(work), ...(options.logger ? { logger: options.logger } : {}), ...(options.onRequest ? { onRequest: options.onRequest } : {}) });
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
        if ((req.method === 'GET' || req.method === 'HEAD') && (req.url === '/' || req.url === '')) return void res.writeHead(302, { location: '/docs' }).end();
        if (control?.handle(req, res)) return;
        for (const listener of gatewayListeners) listener(req, res);
      });
      return server;
    },
    close: () => {
      notifier.stop();
      batches.stop();
      store.close();
    },
  };
}

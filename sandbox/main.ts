#!/usr/bin/env node
// npm start, `payment-gateway sandbox`, or the payment-gateway-sandbox bin: the sandbox on
// http://127.0.0.1:4010, on ./data/sandbox.db. Every mistake a user can make when starting it (an
// option, an environment value, a damaged database, a key that does not open the vault, a port in
// use) ends in one line that says what to do, before anything is created.
import {
  checkNode,
  isMain,
  listen,
  parse,
  portOf,
  runCommand,
  guidePath,
  UsageError,
  type CommandSpec,
} from '../cli-kit/index.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { http } from '../runtime/node-http.ts';
import type { AddressInfo } from 'node:net';
import type { unavailableAnswer as unavailableAnswerType } from './index.ts';
import { logWriter } from '../runtime/log-line.ts';
import type { Logger, RequestRecord } from '../server-stubs/index.ts';
import { ORIGINS_ENV, originPolicy } from './origins.ts';
import { HOSTS_ENV, hostPolicy } from './hosts.ts';
import { POOL_SIZE, POOL_WAIT_MS } from './pool-settings.ts';
import { waitsHelp } from './waits.ts';

const ACCOUNT_ENV = {
  PGW_SANDBOX_MERCHANT_UUID: 'the merchant account seeded into a new database',
  PGW_SANDBOX_PARTNER_UUID: 'the partner account seeded into a new database',
  PGW_SANDBOX_API_KEY: 'the api key of both seeded accounts',
  PGW_SANDBOX_PASSPHRASE: 'the passphrase of both seeded accounts',
  PGW_SANDBOX_PARTNER_NOTIFY_URL: "where the partner's notifications go",
};

/** What a shared deployment tunes: the store, the connections, the notification addresses (docs/DEPLOY.md). */
const DEPLOYMENT_ENV = {
  PGW_SANDBOX_CONTROL: 'off: no control API (/_sandbox/…); it never runs under NODE_ENV=production',
  PGW_SANDBOX_MAX_CONNECTIONS_PER_CLIENT:
    "the connections one client address may hold (default: a share of the server's)",
  PGW_DB_POOL: `PostgreSQL: the connections of each of its two pools (default ${POOL_SIZE})`,
  PGW_DB_POOL_WAIT_MS: `PostgreSQL: how long a request waits for a pooled connection before it is answered 503 (default ${POOL_WAIT_MS})`,
  PGW_PG_SYNCHRONOUS_COMMIT:
    "PostgreSQL: off to commit without waiting for the server's disk (docs/DEPLOY.md, durability)",
  PGW_SQLITE_SYNCHRONOUS: 'SQLite: NORMAL (default) or FULL, one fsync per commit',
  PGW_SANDBOX_NOTIFY_PRIVATE: 'allow: notifications may go to private and link-local addresses',
  PGW_SANDBOX_NOTIFY_LOOPBACK: 'deny: notifications may not go to loopback addresses',
};

export const sandboxSpec = (name: string): CommandSpec => ({
  name,
  usage: `[--port PORT] [--host HOST] [--db FILE] [--quiet]\n       ${name} accounts <add|list|rotate> [options]`,
  summary:
    'Runs the stateful sandbox of the whole gateway: every operation, behind the validating server stubs, on an SQLite file. It prints its accounts and a test card, then one line per request.',
  options: {
    port: {
      type: 'string',
      short: 'p',
      value: 'PORT',
      env: 'PORT',
      default: '4010',
      help: 'port to listen on (0: any free port)',
    },
    host: {
      type: 'string',
      value: 'HOST',
      env: 'HOST',
      default: '127.0.0.1',
      help: 'address to listen on (0.0.0.0: every interface)',
    },
    db: {
      type: 'string',
      value: 'FILE',
      env: 'PGW_DB',
      default: './data/sandbox.db',
      help: 'the SQLite database, made on first start; :memory: keeps nothing; a postgres:// URL: a PostgreSQL database several instances share',
    },
    quiet: { type: 'boolean', short: 'q', env: 'PGW_QUIET=1', help: 'no request log' },
  },
  env: {
    ...ACCOUNT_ENV,
    ...DEPLOYMENT_ENV,
    ...waitsHelp(),
    PGW_SANDBOX_DATA_KEY:
      'the 32-byte key (base64) that encrypts stored card numbers; default: FILE.key beside the database, made once (PostgreSQL: one key kept in the database)',
    [ORIGINS_ENV]:
      'the web pages whose browsers may call the sandbox (CORS): origins separated by commas, null (the opaque origin: pages opened from disk, sandboxed frames), loopback (any local port), * or none; default loopback (docs/DEPLOY.md)',
    [HOSTS_ENV]:
      'the host names requests may name (Host) besides localhost, 127.0.0.1, [::1] and --host: names separated by commas, *.example.com, or * for any; default none (docs/DEPLOY.md)',
    PGW_SANDBOX_SCENARIOS:
      'off: a request may not ask for an outcome or a fault (SVC-SANDBOX-SCENARIO, docs/SCENARIOS.md); it is refused -2',
    NODE_ENV:
      'production: answers that break the contract are sent and logged instead of refused, and the control API and the scenarios are off',
  },
  notes: [
    `The accounts are seeded into a new database only: a database keeps the accounts it was made with. On a shared sandbox each team gets a merchant of its own from ${name} accounts add.`,
    '',
    'Commands:',
    "  accounts  the database's accounts: add a merchant with secrets of its own, list them, rotate a merchant's secrets",
    '',
    `Example: ${name} --port 0 --db :memory:`,
  ],
});

const time = () => new Date().toISOString().slice(11, 23);

/**
 * A request to the port while the sandbox starts (its store opening): the gateway's 503 and -4 in the
 * caller's wire format, as while its store is away (sandbox/index.ts), try again in a second.
 */
function starting(answer: typeof unavailableAnswerType) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]),
    ) as Record<string, string | undefined>;
    const {
      status,
      headers: answerHeaders,
      body,
    } = answer({ verb: req.method ?? 'GET', url: req.url ?? '/', headers }, 1, 'starting');
    res.writeHead(status, { ...answerHeaders, connection: 'close' });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

/**
 * The request log: time, verb, path, method, operationId, responseCode (or status), ms; a refusal's
 * stable code (docs/REFUSALS.md), which the answer does not carry; why a -1.
 */
export function logLine(r: RequestRecord): string {
  const code = r.responseCode ?? `HTTP ${r.status}`;
  return `${time()} ${r.verb} ${r.path} ${r.method ?? '-'} ${r.operationId ?? '-'} ${code} ${r.ms.toFixed(1)}ms${r.errorCode ? ` ${r.errorCode}` : ''}${r.reason ? `  ${r.reason}` : ''}`;
}

const requestLog = logWriter(process.stdout);
/** The stubs' console log without its info lines (the request log tells each refusal already). */
const warningsOnly = (logger: Logger): Logger => ({ warn: logger.warn, error: logger.error });

export async function main(name: string, argv: string[]): Promise<void> {
  checkNode(name);
  // The operator's command for the database's accounts: a program of its own (accounts-command.ts).
  if (argv[0] === 'accounts') {
    process.exitCode = await (await import('./accounts-command.ts')).run(`${name} accounts`, argv.slice(1));
    return;
  }
  const parsed = parse(sandboxSpec(name), argv);
  if (parsed === 'exit') return;
  const v = parsed.values;
  const env = process.env;
  const port = portOf(
    v.port as string | undefined,
    v.port !== undefined ? '--port' : 'PORT',
    portOf(env.PORT, 'PORT', 4010),
  );
  const host = (v.host as string | undefined) ?? (env.HOST || '127.0.0.1');
  const dbPath = (v.db as string | undefined) ?? (env.PGW_DB || './data/sandbox.db');
  const quiet = Boolean(v.quiet) || Boolean(env.PGW_QUIET && env.PGW_QUIET !== '0');
  // Loaded once --help is answered, as the sandbox itself is: a help, and a mistake in the arguments,
  // print before the stubs or any store module loads (`sandbox --help` took 0.23 s of CPU with them, 0.04 s without).
  const { checkDataKey, checkOpenedStore, openFailure, storePlace } = await import('./open-store.ts');
  const { consoleLogger } = await import('../server-stubs/index.ts');
  checkDataKey(env.PGW_SANDBOX_DATA_KEY);
  // The port first: one in use is refused before a database or a key file is made. It is then held
  // (this listening socket) until the sandbox's server takes it over below, so that no other process
  // can take it in between: before, one could (another instance started on the same new database),
  // and this start was refused after it had made the database and the key file. A request that
  // arrives meanwhile is answered 503, Retry-After 1 (test/sandbox/start-race.test.ts).
  const option = v.port !== undefined ? '--port' : 'PORT (or --port)';
  const { createSandbox, SettingRefused, unavailableAnswer } = await import('./index.ts');
  const held = port !== 0 ? http.createServer(starting(unavailableAnswer)) : undefined;
  if (held) await listen(held, port, host, option);
  /** The port let go: a start refused before its server listens leaves nothing listening. */
  const release = async () => {
    if (!held) return;
    held.closeAllConnections();
    await new Promise((resolve) => held.close(resolve));
  };

  // Where the store is, as the messages name it (a PostgreSQL URL without its password), and its key file.
  const place = storePlace(dbPath);
  let sandbox: Awaited<ReturnType<typeof createSandbox>>;
  try {
    sandbox = await createSandbox({
      dbPath,
      env,
      // npm start is a sandbox: the control API is on unless NODE_ENV=production or PGW_SANDBOX_CONTROL=off.
      control: true,
      // Every line through the one log writer (runtime/log-line.ts): a path, a body's method, a
      // field's name are the caller's text, written with card numbers masked and controls escaped.
      logger: warningsOnly(consoleLogger(logWriter(process.stderr))),
      ...(quiet ? {} : { onRequest: (r: RequestRecord) => requestLog(logLine(r)) }),
      // The address it listens on names it too, unless that is every interface's.
      hosts: ['0.0.0.0', '::', '[::]'].includes(host) ? [] : [host.includes(':') ? `[${host}]` : host],
    });
  } catch (error) {
    await release();
    if (error instanceof SettingRefused) throw new UsageError(error.message);
    // Nothing is removed: a key file written once the store opened may be read by another instance
    // starting on the same new database (it would store cards under a key then gone).
    throw openFailure(place, error);
  }
  // A damaged file, or a database copied without its key (or with another's): refuse to start.
  try {
    await checkOpenedStore(place, env, sandbox.store, sandbox.vault, () => sandbox.close());
  } catch (error) {
    await release();
    throw error;
  }

  // The gateway, the control API under /_sandbox/, / sent to the docs, and the server's time-outs:
  // on the socket held since the port check (node:http's listen(handle)), or on any free port.
  const server = sandbox.server();
  const bound = held
    ? await new Promise<number>((resolve) => server.listen(held, () => resolve((server.address() as AddressInfo).port)))
    : await listen(server, port, host, option);
  sandbox.notifier.start(sandbox.waits.deliveryEveryMs);
  const named = await namedAccounts(sandbox);
  const ready = await banner(sandbox, named, name, host, bound, place.shown, env);
  const unheld = notHeld(name, place.shown, named, sandbox, env);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close(() => void sandbox.close().finally(() => process.exit(0)));
    server.closeIdleConnections();
    // A connection that turns idle later (a `listen` client's long poll, answered) would hold the
    // server open for good: close those as they turn idle, and every connection once the grace is over.
    const idle = setInterval(() => server.closeIdleConnections(), 250).unref();
    setTimeout(() => {
      clearInterval(idle);
      server.closeAllConnections();
    }, sandbox.waits.closeGraceMs).unref();
  };
  // Listening for a stop before the banner says it is ready: a supervisor may send SIGTERM as soon
  // as it reads the banner, and one that came first would end the process with its store open.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, stop);
  stopWhenOrphaned(env, stop);
  if (unheld) logWriter(process.stderr)(unheld);
  console.log(ready);
}

/**
 * Started by npm (`npm start`), the sandbox runs under `sh -c`: a SIGTERM sent to npm reaches that
 * shell, and Debian's dash dies without passing it on, which left the sandbox running, orphaned, with
 * its port. So a sandbox npm started stops, as on SIGTERM, once the process that started it is gone
 * (its parent changes). `exec` in the npm script would do it on POSIX shells only, not Windows' cmd.
 */
function stopWhenOrphaned(env: NodeJS.ProcessEnv, stop: () => void): void {
  if (!env.npm_lifecycle_event) return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    console.log('sandbox: the process that started it is gone; stopping');
    stop();
  }, 500).unref();
}

type Stored = { id: string; api_key: string; passphrase: string };
type RunningSandbox = Awaited<ReturnType<typeof import('./index.ts')['createSandbox']>>;
type Named = { merchant: Stored | undefined; partner: Stored | undefined };

/** The merchant and partner the PGW_SANDBOX_* variables name (else the spec's), as the store holds them, if it does. */
async function namedAccounts(sandbox: RunningSandbox): Promise<Named> {
  const stored = (kind: string, id: string) =>
    sandbox.store.get<Stored>('SELECT id, api_key, passphrase FROM accounts WHERE kind = ? AND id = ?', kind, id);
  return {
    merchant: await stored('merchant', sandbox.seed.merchantUUID),
    partner: await stored('partner', sandbox.seed.partnerUUID),
  };
}

/**
 * One line for stderr when the variables name an account the database does not hold: a database
 * keeps the accounts it was made with (nothing was added), and the command that adds one.
 */
function notHeld(
  name: string,
  dbPath: string,
  named: Named,
  sandbox: RunningSandbox,
  env: NodeJS.ProcessEnv,
): string | undefined {
  const missing = (['merchant', 'partner'] as const)
    .filter((kind) => !named[kind])
    .map((kind) => {
      const variable = kind === 'merchant' ? 'PGW_SANDBOX_MERCHANT_UUID' : 'PGW_SANDBOX_PARTNER_UUID';
      const id = kind === 'merchant' ? sandbox.seed.merchantUUID : sandbox.seed.partnerUUID;
      return `${kind} ${id} (${env[variable] ? variable : `the spec's x-sandbox one: ${variable} is unset`})`;
    });
  if (!missing.length) return undefined;
  return `${name}: ${dbPath} keeps the accounts it was made with: it holds no ${missing.join(' nor ')}, and none was added; ${name} accounts add makes a merchant`;
}

/** What the sandbox really accepts: the stored accounts, and a warning for each value the environment asks for in vain. */
async function banner(
  sandbox: RunningSandbox,
  named: Named,
  name: string,
  host: string,
  port: number,
  dbPath: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const base = `http://${host === '0.0.0.0' ? 'localhost' : host}:${port}`;
  const { merchant, partner } = named;
  const { testCard } = sandbox.spec.info['x-sandbox'];
  const none = (kind: string, id: string) =>
    `none: the database holds no ${kind} ${id} (${name} accounts list shows the accounts it holds)`;
  // The document the sandbox loaded already: reading the package's copy again cost a sandbox's start
  // a second parse of the whole published document (about 1 MB) for these four fields.
  const defaults = sandbox.spec.info['x-sandbox'];
  // Secrets the operator gave (PGW_SANDBOX_*) or the spec's public ones are shown; others (made or
  // rotated by `accounts`) never reach the banner, which is the service's log on a shared sandbox.
  const known = (value: string, variable: string, spec: string) => value === env[variable] || value === spec;
  const secrets = (a: Stored) =>
    known(a.api_key, 'PGW_SANDBOX_API_KEY', defaults.apiKey) &&
    known(a.passphrase, 'PGW_SANDBOX_PASSPHRASE', defaults.passphrase)
      ? `apiKey ${a.api_key}  passphrase ${a.passphrase}`
      : `(its secrets are its own, not shown: ${name} accounts rotate gives new ones)`;
  const { controlAllowed } = await import('./control.ts');
  const lines = [
    `Payment gateway sandbox on ${base} (store: ${dbPath}, schema v${await sandbox.store.schemaVersion})`,
    `  docs      ${base}/docs`,
    `  spec      ${base}/openapi.json  ${base}/openapi.yaml`,
    `  merchant  ${merchant ? `merchantUUID ${merchant.id}  ${secrets(merchant)}` : none('merchant', sandbox.seed.merchantUUID)}`,
    `  partner   ${partner ? `partnerUUID ${partner.id}  ${secrets(partner)}` : none('partner', sandbox.seed.partnerUUID)}`,
    `  test card ${testCard.paymentCardNumber}, expiry ${testCard.paymentCardExpiry.slice(0, 2)}/${testCard.paymentCardExpiry.slice(2)}, CSC ${testCard.paymentCardCSC} (approved); see ${guidePath('CLIENT-TEAMS.md')} for the others`,
    `  browsers  pages of ${originPolicy(env[ORIGINS_ENV]).text} may call it (${ORIGINS_ENV}); the docs' try-it console signs in the page`,
    `  hosts     requests must name it by ${hostPolicy(env[HOSTS_ENV], ['0.0.0.0', '::'].includes(host) ? [] : [host]).text} (${HOSTS_ENV})`,
    `  control   ${sandbox.control ? `${base}/_sandbox (${base}/_sandbox/openapi.yaml; HTTP Basic merchantUUID:apiKey)` : `off (${controlAllowed(true, env).why})`}`,
  ];
  const held = [merchant, partner].filter((a) => a !== undefined);
  for (const [variable, field] of [
    ['PGW_SANDBOX_API_KEY', 'api_key'],
    ['PGW_SANDBOX_PASSPHRASE', 'passphrase'],
  ] as const) {
    const asked = env[variable];
    if (asked && held.some((account) => asked !== account[field])) {
      lines.push(
        `  warning   ${variable} is not applied: ${dbPath} keeps the accounts it was made with (shown above); use a new --db to apply it`,
      );
    }
  }
  if (merchant && merchant.id !== defaults.merchantUUID)
    lines.push(
      `  note      the merchant is not the spec's x-sandbox one (${defaults.merchantUUID}): clients and the contract suite need PGW_MERCHANT_UUID=${merchant.id}`,
    );
  return lines.join('\n');
}

if (isMain(import.meta.url))
  await runCommand('payment-gateway-sandbox', () => main('payment-gateway-sandbox', process.argv.slice(2)));

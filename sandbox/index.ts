// The reference implementation: a stateful sandbox of the whole gateway behind the validating stubs.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type http from 'node:http';
import {
  createGateway,
  createNodeServer,
  type NodeServerOptions,
  type Gateway,
  type GatewayHandlers,
  type HandlerContext,
  type GatewayRequest,
  type GatewayResponse,
  type Logger,
  type RequestRecord,
  protocols,
  refusalFields,
  route,
  servedAt,
} from '../server-stubs/index.ts';
import { refused, sandboxRefusals as refusals } from './refusals.ts';
import { type RequestStore, StoreHealth, watched } from './store-health.ts';
import { storeAccounts, seedAccounts, type AccountSeed } from './accounts.ts';
import { Clock } from './clock.ts';
import { datedOnCallersTime, onCallersTime } from './clock-store.ts';
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
import { RequestLog } from './request-log.ts';
import { respondWithScenario, SCENARIO_HEADER, scenarioEdge, scenariosAllowed, withScenarios } from './scenarios.ts';
import { Notifier } from './notifier.ts';
import { pinnedSend, type Send } from './notify-send.ts';
import { corsFor, ORIGINS_ENV, originPolicy } from './cors.ts';
import { HOSTS_ENV, hostPolicy } from './hosts.ts';
import { openVaultedStore } from './open-store.ts';
import { policyFromEnv, type Resolve, resolveAll, urlRefusal } from './url-policy.ts';
import { withExactSchemas } from '../runtime/exact-requests.ts';
import { SettingRefused } from './setting-refused.ts';
import { waitsFromEnv } from './waits.ts';

export { SettingRefused };

/** The embedded store's class, for benches that bulk-load its file through node:sqlite directly. */
export type { SqliteStore } from './store-sqlite.ts';
export type { Store } from './store.ts';

const require = createRequire(import.meta.url);

let published: Record<string, any> | undefined;

/**
 * The published contract as the package reads it: its exact request schemas among the components.
 * Read once per process and frozen, so every sandbox of the process (the tests make hundreds) shares
 * one copy that none of them can change under another: reading, parsing and repointing it took 8 to
 * 18 ms a sandbox.
 */
export function loadSpec(): Record<string, any> {
  if (published) return published;
  const file = require.resolve('payment-gateway-contract/openapi.json');
  const doc: Record<string, any> = frozen(withExactSchemas(JSON.parse(readFileSync(file, 'utf8'))));
  published = doc;
  return doc;
}

/** `node` and everything it holds, frozen. */
function frozen<T>(node: T): T {
  if (node && typeof node === 'object' && !Object.isFrozen(node)) {
    Object.freeze(node);
    for (const value of Object.values(node)) frozen(value);
  }
  return node;
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

export interface SandboxOptions {
  /** SQLite file, :memory:, or a postgres:// URL. Default: PGW_DB, else ./data/sandbox.db. */
  dbPath?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * How notifications are sent (tests record them): a fetch that decides where it connects. Without
   * it, the sandbox's own sender connects to the address the URL policy checked (notify-send.ts).
   */
  fetch?: typeof fetch;
  /**
   * How host names of notification URLs are resolved at send time, each address held to the URL
   * policy. Default: the system's resolver, unless `fetch` is given (then names are not resolved
   * unless this is given too: tests resolve with a stub, never over the network).
   */
  resolve?: Resolve;
  logger?: Logger;
  /**
   * Serve the control API under /_sandbox/ (sandbox/control.openapi.yaml). Refused whatever is asked
   * when NODE_ENV=production or PGW_SANDBOX_CONTROL=off. Default off; npm start turns it on.
   */
  control?: boolean;
  /** Each answered request (the request log of `npm start`); none in tests unless given. */
  onRequest?: (record: RequestRecord) => void;
  /** Host names it answers to besides the loopback ones and PGW_SANDBOX_ALLOWED_HOSTS (the address given to --host). */
  hosts?: readonly string[];
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
 * inflated in slices, a settlement file read a page at a time as its client takes it) must not hold
 * a transaction, and their writes (processBatch's) run in a transaction of their own after every
 * check has passed.
 */
const OUTSIDE_UNIT = new Set(['processBatch', 'getSettlement']);
/**
 * A stop's drain (server.close, SIGTERM): every request the server has taken is answered, and the last
 * one of each keep-alive connection says `Connection: close`, so that its client opens a new
 * connection for its next request rather than send it on one the server is about to close (before,
 * answers during the drain said keep-alive, and a client's next request on that connection met the
 * close and got no answer). A request that arrives on a connection while an earlier answer of it is
 * under way is answered too, the close moved to its own answer; one that arrives after an answer
 * that said close was written cannot be answered (the connection ends with that answer), so it is
 * not run: nothing stored that its client never hears of.
 */
function drainOnClose() {
  let draining = false;
  /** Answers not yet finished, and each connection's latest. */
  const open = new Set<http.ServerResponse>();
  const latest = new WeakMap<object, http.ServerResponse>();
  const closes = (res: http.ServerResponse) => String(res.getHeader('connection') ?? '').toLowerCase() === 'close';
  return {
    begin() {
      draining = true;
      for (const res of open)
        if (latest.get(res.socket!) === res && !res.headersSent) res.setHeader('connection', 'close');
    },
    admit(req: http.IncomingMessage, res: http.ServerResponse): boolean {
      const socket = req.socket;
      const before = latest.get(socket);
      if (draining) {
        if (before && open.has(before)) {
          if (before.headersSent && closes(before)) return false;
          // Kept open for this one (removing the header would close it: node:http reads that as close).
          if (!before.headersSent) before.setHeader('connection', 'keep-alive');
        }
        res.setHeader('connection', 'close');
      }
      latest.set(socket, res);
      open.add(res);
      res.once('close', () => open.delete(res));
      return true;
    },
  };
}

/**
 * The gateway's 503 while this instance cannot serve: Retry-After, the gateway's -4 in the operation's
 * refusal, written in the protocol the request is in (as every refusal is). `why`: its store cannot be
 * reached, its pool is busy, or it is still starting (sandbox/main.ts holds the port meanwhile).
 */
export function unavailableAnswer(
  request: Pick<GatewayRequest, 'verb' | 'url' | 'headers'>,
  seconds: number,
  why: 'unreachable' | 'busy' | 'starting' = 'unreachable',
): GatewayResponse {
  const pathname = request.url.split('?')[0]!;
  const routed = route(request.verb, pathname);
  const code = 'match' in routed ? routed.match.candidates[0]!.refusalCode : 'string';
  const protocol = protocols.choose(request.headers, servedAt(pathname));
  const refusal =
    why === 'busy'
      ? refusals.storeBusy(seconds)
      : why === 'starting'
        ? refusals.starting(seconds)
        : refusals.storeUnavailable(seconds);
  return {
    status: 503,
    headers: { 'content-type': protocol.answerType, 'retry-after': String(seconds), 'cache-control': 'no-store' },
    body: protocol.writeAnswer(refusalFields(code, refusal)),
  };
}

/** The path a load balancer asks whether this instance can serve (docs/DEPLOY.md). */
export const HEALTH_PATH = '/_sandbox/health';

/**
 * The HTTP server's options the environment sets: PGW_SANDBOX_MAX_CONNECTIONS_PER_CLIENT, each client
 * address's share of connections (behind a load balancer every client has its address: raise it).
 */
function serverOptions(env: NodeJS.ProcessEnv): NodeServerOptions {
  const perClient = env.PGW_SANDBOX_MAX_CONNECTIONS_PER_CLIENT;
  if (perClient === undefined) return {};
  const n = Number(perClient);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new SettingRefused(
      'PGW_SANDBOX_MAX_CONNECTIONS_PER_CLIENT',
      `must be a whole number of 1 or more, not ${perClient}`,
    );
  return { maxConnectionsPerClient: n };
}

export async function createSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const env = options.env ?? process.env;
  const dbPath = options.dbPath ?? env.PGW_DB ?? './data/sandbox.db';
  // Read before the store opens: a bad value stops the start with nothing opened.
  const waits = waitsFromEnv(env);
  const cors = corsFor(originPolicy(env[ORIGINS_ENV]));
  const hosts = hostPolicy(env[HOSTS_ENV], options.hosts);
  const wrongHost = JSON.stringify(refused(refusals.hostNotAllowed(HOSTS_ENV)));
  const spec = loadSpec();
  const defaults = spec.info['x-sandbox'];
  const seed: AccountSeed = {
    merchantUUID: env.PGW_SANDBOX_MERCHANT_UUID ?? defaults.merchantUUID,
    partnerUUID: env.PGW_SANDBOX_PARTNER_UUID ?? defaults.partnerUUID,
    apiKey: env.PGW_SANDBOX_API_KEY ?? defaults.apiKey,
    passphrase: env.PGW_SANDBOX_PASSPHRASE ?? defaults.passphrase,
    ...(env.PGW_SANDBOX_PARTNER_NOTIFY_URL ? { partnerNotifyURL: env.PGW_SANDBOX_PARTNER_NOTIFY_URL } : {}),
  };
  const policy = policyFromEnv(env);
  // Every value of the environment checked before the store opens: a refused start makes nothing
  // (before, these two were refused with the database and its key file made, and the store open).
  if (seed.partnerNotifyURL) {
    const why = urlRefusal(seed.partnerNotifyURL, policy);
    if (why) throw new SettingRefused('PGW_SANDBOX_PARTNER_NOTIFY_URL', why);
  }
  const connections = serverOptions(env);
  // Every store call watched: a database that cannot be reached opens the breaker (store-health.ts).
  const health = new StoreHealth();
  const opened = await openVaultedStore(dbPath, env);
  // From here on a failure (seeding a damaged database, any later refusal) closes what this start
  // opened before it is thrown: before, its PostgreSQL pool or SQLite handles stayed open in the
  // process (test/sandbox/start-cleanup.test.ts).
  const undo: (() => Promise<unknown>)[] = [() => opened.store.close()];
  try {
    const store = watched(opened.store, health);
    const { vault } = opened;
    const clock = new Clock();
    const given = options.fetch;
    const send: Send = given ? (url, init) => given(url, init) : pinnedSend;
    const resolve = options.resolve ?? (given ? undefined : resolveAll);
    // Every delivery attempt is kept in the store (delivery_attempts), for the control API of any instance.
    const notifier = new Notifier(store, clock, spec, send, policy, waits, resolve);
    await seedAccounts(store, clock, seed, DEFAULT_SURCHARGE_BP);
    const sb: Sandbox = { store, clock, vault, notifier, spec, policy, waits };
    // Batches run in slices in the background; one left pending by a stop goes on from where it was.
    const batches = new BatchRunner(sb);
    batches.kick();
    batches.poll();
    undo.push(() => batches.stop());
    // A payout transaction's notification is queued once its last attempt has ended on the sandbox clock.
    notifier.onRun(() => payoutsDue(sb));
    let handlers = sandboxHandlers(sb, batches);
    const accounts = storeAccounts(store, clock);
    // Each account's own request log, read through the control API: kept only where that is on.
    const requestLog = controlAllowed(options.control ?? false, env).on ? new RequestLog(store, accounts) : undefined;
    if (requestLog) undo.push(() => requestLog.close());
    const control = requestLog ? new Control(sb, requestLog, health) : undefined;
    if (control) {
      handlers = control.wrap(handlers);
    }
    // A request's own scenario (x-sandbox-scenarios), unless the operator turned them off.
    handlers = withScenarios(handlers, scenariosAllowed(env));
    const core = createGateway({
      // Each handler on its caller's time (clock-store.ts): an account's clock moves no one else's.
      handlers: guarded(onCallersTime(handlers, store, clock), spec, policy),
      accounts,
      transaction: (work, operationId) =>
        OUTSIDE_UNIT.has(operationId) ? work() : store.transaction(async () => work()),
      // Without a logger the sandbox keeps its console to itself: its request log (onRequest) tells refusals.
      logger: options.logger ?? false,
      ...(requestLog || options.onRequest
        ? {
            onRequest: (record: RequestRecord, request: GatewayRequest) => {
              requestLog?.record(record, request);
              options.onRequest?.(record);
            },
          }
        : {}),
    });
    // Requests under way, so that close() lets them finish before the store goes: a request that
    // outlived its client would otherwise run on into a closed pool.
    const inFlight = new Set<Promise<unknown>>();
    // While the store is away: 503 at once (unavailableAnswer).
    const respond: Gateway['respond'] = (request) => {
      const wait = health.retryAfter();
      if (wait !== undefined) return unavailableAnswer(request, wait);
      const scenario = request.headers[SCENARIO_HEADER];
      // What this request's store calls meet: one that found the store gone, or no pool connection free
      // in time (store-health.ts), makes its failure a 503.
      const seen: RequestStore = { unavailable: false };
      // Dated on the caller's clock (its Date header), as every date the sandbox writes.
      const found = health.within(seen, () =>
        datedOnCallersTime(clock, () =>
          scenario === undefined ? core.respond(request) : respondWithScenario(scenario, request, core.respond),
        ),
      );
      // A request that found the store gone (its failure opened the breaker), or that waited for a pool
      // connection until the pool gave up, is told so, as 503.
      const outage = (response: GatewayResponse) =>
        response.status === 500 && (health.down || seen.unavailable)
          ? unavailableAnswer(request, health.waitSeconds(), !health.down && seen.busy ? 'busy' : 'unreachable')
          : response;
      const answer = found instanceof Promise ? found.then(outage) : outage(found);
      if (answer instanceof Promise) {
        inFlight.add(answer);
        void answer.finally(() => inFlight.delete(answer)).catch(() => {});
      }
      return answer;
    };
    const gateway: Gateway = { ...core, respond, handle: async (request) => respond(request) };
    let closing = false;
    /**
     * GET /_sandbox/health, for a load balancer: 200 when this instance can serve (its store answers
     * SELECT 1 within a second, it is not closing), else 503 with Retry-After. No credentials, no data:
     * the body says ok or unavailable, nothing else.
     */
    const health_ = (req: http.IncomingMessage, res: http.ServerResponse) => {
      const answer = (ok: boolean, seconds = 1) => {
        const body = JSON.stringify({ status: ok ? 'ok' : 'unavailable' });
        res.writeHead(ok ? 200 : 503, {
          'content-type': 'application/json',
          'cache-control': 'no-store',
          ...(ok ? {} : { 'retry-after': String(seconds) }),
        });
        res.end(req.method === 'HEAD' ? undefined : body);
      };
      if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
      if (closing) return answer(false);
      const wait = health.retryAfter();
      if (wait !== undefined) return answer(false, wait);
      const timer = new Promise<false>((resolve) => setTimeout(() => resolve(false), 1000).unref());
      void Promise.race([
        store.get('SELECT 1 AS ok').then(
          () => true,
          () => false,
        ),
        timer,
      ]).then((ok) => answer(ok, health.waitSeconds()));
    };
    return {
      ...sb,
      gateway,
      seed,
      control,
      server: () => {
        const server = createNodeServer(gateway, {
          ...connections,
          answerStallTimeout: waits.answerStallMs,
          // A download cut for a stalled client is told through the sandbox's logger (npm start: stderr).
          logger: options.logger ?? false,
        });
        // The connections a noAnswer scenario holds open: ended when the server closes.
        const held = new Set<http.ServerResponse>();
        const drain = drainOnClose();
        /** Aborted when this server begins to close: the control API's long polls answer at once. */
        const stopping = new AbortController();
        const close = server.close.bind(server);
        server.close = ((callback?: (error?: Error) => void) => {
          for (const res of held) res.socket?.destroy();
          drain.begin();
          // A long poll (`payment-gateway listen`) answers now, with Connection: close, not after up
          // to 60 s: the stop no longer waits out its grace for it (test/sandbox/shutdown.test.ts).
          stopping.abort();
          return close(callback);
        }) as typeof server.close;
        // / sends a browser to the docs; /_sandbox/ goes to the control API; every other path to the gateway.
        const gatewayListeners = server.listeners('request') as http.RequestListener[];
        server.removeAllListeners('request');
        server.on('request', (req, res) => {
          // While the server closes: answered with Connection: close, or not run at all when its
          // connection ends with an earlier answer already under way.
          if (!drain.admit(req, res)) return;
          // Every answer dated on the sandbox clock; the gateway's and the control API's on their caller's.
          res.setHeader('date', clock.now().toUTCString());
          if (req.url === HEALTH_PATH || req.url?.startsWith(`${HEALTH_PATH}?`)) return void health_(req, res);
          // A request naming another host is a page rebound to this address (hosts.ts): refused first.
          if (!hosts.allows(req.headers.host))
            return void res
              .writeHead(403, { 'content-type': 'application/json', 'cache-control': 'no-store' })
              .end(wrongHost);
          // A browser's preflight is answered here; an allowed page's answers are marked readable.
          if (cors(req, res)) return;
          scenarioEdge(req, res, held);
          if ((req.method === 'GET' || req.method === 'HEAD') && (req.url === '/' || req.url === ''))
            return void res.writeHead(302, { location: '/docs' }).end();
          if (control && req.url?.startsWith('/_sandbox/')) {
            const wait = health.retryAfter();
            if (wait !== undefined) return void control.unavailable(res, wait);
          }
          if (control?.handle(req, res, stopping.signal)) return;
          for (const listener of gatewayListeners) listener(req, res);
        });
        return server;
      },
      close: async () => {
        closing = true;
        const settled = Promise.allSettled([...inFlight, notifier.stop(), batches.stop()]);
        await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, waits.closeGraceMs).unref())]);
        await requestLog?.close();
        await store.close();
      },
    };
  } catch (error) {
    for (const step of undo.reverse()) await step().catch(() => {});
    throw error;
  }
}

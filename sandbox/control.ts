// The sandbox control API (sandbox/control.openapi.yaml), served under /_sandbox/: move the clock,
// force outcomes, trigger notifications, watch deliveries, reset a merchant. Sandbox-only by design:
// it is on only when asked for, never when NODE_ENV=production, and every call is authenticated with
// the account's own credentials and sees only that account's data.
import { existsSync, readFileSync } from 'node:fs';
import type http from 'node:http';
import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { cardNumberPath, findCardNumber } from '../runtime/card-numbers.ts';
import { holdsNul, nulField } from '../runtime/nul-text.ts';
import { parseJson } from '../runtime/protocols/json.ts';
import {
  type GatewayHandlers,
  type HandlerContext,
  type Refusal,
  ruleInWords,
  validationRefusals,
} from '../server-stubs/index.ts';
import { bankAnswer } from './cards.ts';
import { forcedOutcomesPending } from './accounts.ts';
import { CLOCK_RANGE_DAYS, CLOCK_RANGE_MS } from './clock.ts';
import { advance as advanceClock, clockOf, onAccountTime, onScopeTime, sync as syncClock } from './clock-store.ts';
import { directDebitResult } from './handlers/direct-debit.ts';
import { tablesWithColumn, type Sandbox } from './context.ts';
import { OUTCOMES, type Outcome as LogOutcome, type RequestLog } from './request-log.ts';
import { newAjv } from './ajv.ts';
import { askedOutcome } from './scenarios.ts';
import { controlRefusals as refusals, refusedInteger, sandboxRefusals } from './refusals.ts';
import { isPoolWait, isUnavailable, type StoreHealth } from './store-health.ts';
import type { Row } from './store.ts';
import { attemptsAt, finishedBy } from './payout-attempts.ts';
import { notifyFieldRefusal } from './url-policy.ts';
import { MAX_ATTEMPTS, OverrideRefused } from './notifier.ts';
import { queueNotificationFor, type NotifyEvent } from './handlers/notify.ts';
import { CHAOS_DEFAULTS, type ChaosKind, chaosOfRow, DEFAULT_RATES, summary, tallyOf } from './chaos.ts';

export const CONTROL_PREFIX = '/_sandbox';

type ControlAccount = { kind: string; id: string; apiKey: string; passphrase: string };
type ChaosSetting = {
  notifyURL: string;
  faults?: Partial<Record<ChaosKind, number>>;
  seed?: number;
  maxDelayMs?: number;
  staleSeconds?: number;
};
type ControlTrigger = {
  event: NotifyEvent;
  for?: string;
  transactionID?: string;
  notifyURL?: string;
  set?: Record<string, unknown>;
};
/** Every control request is a few fields: anything larger is refused unread. */
const MAX_BODY_BYTES = 16 * 1024;
// Beside this module in the source tree; two levels up from dist/sandbox/ in the published package.
const DOCUMENT_FILE = [
  new URL('./control.openapi.yaml', import.meta.url),
  new URL('../../sandbox/control.openapi.yaml', import.meta.url),
].find((u) => existsSync(u))!;

// The control requests' validators, from the document's schemas: compiled on a schema's first use and
// shared by every sandbox of the process. Parsing the document and compiling all six at each start
// cost a start about a third of its CPU (a sandbox process, or each sandbox a test file makes).
let controlSchemas: Record<string, object> | undefined;
let controlAjv: Ajv2020 | undefined;
const controlValidators = new Map<string, ValidateFunction>();

function controlValidator(name: string): ValidateFunction {
  let validate = controlValidators.get(name);
  if (!validate) {
    controlSchemas ??= (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(
      readFileSync(DOCUMENT_FILE, 'utf8'),
    ).components.schemas as Record<string, object>;
    if (!controlAjv) {
      controlAjv = newAjv({ strict: false });
    }
    validate = controlAjv.compile(controlSchemas[name]!);
    controlValidators.set(name, validate);
  }
  return validate;
}

/** Whether the control API may run: asked for, not disabled by PGW_SANDBOX_CONTROL=off, never in production. */
export function controlAllowed(requested: boolean, env: NodeJS.ProcessEnv): { on: boolean; why: string } {
  if (env.NODE_ENV === 'production') return { on: false, why: 'NODE_ENV=production: the control API never runs there' };
  if (/^(0|off|false|no)$/i.test(env.PGW_SANDBOX_CONTROL ?? ''))
    return { on: false, why: 'PGW_SANDBOX_CONTROL disables it' };
  return requested ? { on: true, why: 'on' } : { on: false, why: 'not requested' };
}

/** The bank answers a forced decline gives: the spec's card outcomes of these names (x-sandbox-scenarios). */
const FORCED = {
  insufficientFunds: bankAnswer('insufficientFunds'),
  expired: bankAnswer('expired'),
  noReply: bankAnswer('noReply'),
} as const;
type Outcome = keyof typeof FORCED;

/** One Ajv error as the gateway words a refusal: the field and the rule. */
function refusalOf(error: ErrorObject): Refusal {
  const at = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (error.keyword === 'required')
    return refusals.required((error.params as { missingProperty: string }).missingProperty);
  if (error.keyword === 'additionalProperties')
    return refusals.notAField((error.params as { additionalProperty: string }).additionalProperty);
  if (error.keyword === 'minProperties') return refusals.noField();
  return refusals.invalid(at, ruleInWords(error));
}

/** The path parameters of each route, by their place in the path (sandbox/control.openapi.yaml's names). */
const PATH_PARAMETERS: Record<string, Record<number, string>> = {
  'POST /payouts/:p/transactions/:t/return': { 2: 'payoutId', 4: 'transactionId' },
  'POST /payouts/:p/complete': { 2: 'payoutId' },
  'POST /direct-debits/:id/dishonour': { 2: 'transactionID' },
  'GET /deliveries/:id': { 2: 'id' },
  'POST /deliveries/:id/resend': { 2: 'id' },
  'DELETE /merchants/:m/data': { 2: 'merchantUUID' },
};

/** A path segment decoded, or undefined when its percent-escapes are malformed. */
function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * A long poll: `read` again as soon as `watch` says something changed (or every 250 ms), until it
 * answers something, the time is up, the sandbox stops (`ended`: the poll is answered at once, as its
 * time-out would, and the drain closes its connection) or the caller hangs up. The server keeps
 * half-closed connections (server-stubs/http/node.ts), so a caller that has gone (its side ended:
 * a `listen` killed, a client closed) leaves its socket open, not destroyed: its end is watched too,
 * and the poll answers then, not at its time-out (a stop waited out its whole grace for it).
 */
async function longPoll<T>(
  read: () => Promise<T[]>,
  watch: (changed: () => void) => () => void,
  waitSeconds: number,
  req: http.IncomingMessage,
  ended: AbortSignal,
): Promise<T[]> {
  const deadline = Date.now() + waitSeconds * 1000;
  const socket = req.socket;
  const over = () => ended.aborted || socket.destroyed || socket.readableEnded;
  let found = await read();
  while (!found.length && Date.now() < deadline && !over()) {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stop();
        ended.removeEventListener('abort', done);
        socket.off('end', done);
        socket.off('close', done);
        resolve();
      };
      const stop = watch(done);
      const timer = setTimeout(done, Math.min(250, Math.max(0, deadline - Date.now())));
      ended.addEventListener('abort', done);
      socket.once('end', done);
      socket.once('close', done);
    });
    if (over()) break;
    found = await read();
  }
  return found;
}

/** The stop of a request handled without one (no server's): never comes. */
const NEVER = new AbortController().signal;

export class Control {
  private readonly sb: Sandbox;
  private readonly log: RequestLog;
  readonly document: string;

  /** The store's breaker, for how long a caller the store cannot serve should wait (store-health.ts). */
  private readonly health: StoreHealth | undefined;
  /** Each request's server's stop (handle's `stopping`): its long poll answers at once once it is aborted. */
  private readonly stopping = new WeakMap<http.IncomingMessage, AbortSignal>();

  constructor(sb: Sandbox, log: RequestLog, health?: StoreHealth) {
    this.sb = sb;
    this.log = log;
    this.health = health;
    this.document = readFileSync(DOCUMENT_FILE, 'utf8');
  }

  /**
   * While the store cannot serve (unreachable, or, busy, no pool connection free in time): 503,
   * Retry-After, the gateway's -4 in the control API's form (responseCode an integer), as the gateway
   * answers, each in its own words.
   */
  unavailable(res: http.ServerResponse, seconds: number, busy = false): void {
    res.writeHead(503, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'retry-after': String(seconds),
    });
    res.end(
      JSON.stringify(
        refusedInteger(busy ? sandboxRefusals.storeBusy(seconds) : sandboxRefusals.storeUnavailable(seconds)),
      ),
    );
  }

  /**
   * Wraps the gateway handlers so that a forced outcome applies to the next approved call of its
   * operation, on whichever instance serves it: the outcome is a row of the store, read FOR UPDATE
   * and deleted in the call's own transaction, so exactly one call takes it. A call whose account had
   * none when it was authenticated (read with the account, accounts.ts) does not look: an outcome forced
   * after that is concurrent with the call, and the next call takes it.
   */
  wrap(handlers: GatewayHandlers<HandlerContext>): GatewayHandlers<HandlerContext> {
    const wrapped: Record<string, unknown> = { ...handlers };
    for (const operationId of [
      'processCard',
      'processAuth',
      'tokenProcessCard',
      'tokenProcessAuth',
      'walletProcessCard',
    ] as const) {
      const handler = handlers[operationId] as (input: unknown, ctx: HandlerContext) => unknown;
      wrapped[operationId] = async (input: unknown, ctx: HandlerContext) => {
        // A request that asked for its own outcome (a scenario) gets it, and leaves the account's forced one for the next.
        if (forcedOutcomesPending(ctx.account) === false || askedOutcome('card')) return handler(input, ctx);
        const result = (await handler(input, ctx)) as Record<string, unknown>;
        if (result.responseCode !== '0' || typeof result.transactionID !== 'string') return result;
        const { store } = this.sb;
        return store.transaction(async () => {
          const forced = await store.get<{ outcome: Outcome }>(
            'SELECT outcome FROM forced_outcomes WHERE merchant_id = ? AND operation_id = ? FOR UPDATE',
            ctx.account.id,
            operationId,
          );
          if (!forced || !(forced.outcome in FORCED)) return result;
          await store.run(
            'DELETE FROM forced_outcomes WHERE merchant_id = ? AND operation_id = ?',
            ctx.account.id,
            operationId,
          );
          const { code, message, authResponseCode: network, authMessage: networkText } = FORCED[forced.outcome];
          await store.run(
            "UPDATE transactions SET status = 'declined', response_code = ?, response_message = ?, captured = 0, auth_code = '', auth_response_code = ?, auth_message = ?, settled_date = NULL WHERE id = ?",
            code,
            message,
            network,
            networkText,
            result.transactionID,
          );
          return {
            ...result,
            responseCode: String(code),
            responseMessage: message,
            authCode: '',
            authResponseCode: network,
            authMessage: networkText,
          };
        });
      };
    }
    return wrapped as unknown as GatewayHandlers<HandlerContext>;
  }

  /**
   * Answers a request under /_sandbox/; false for any other path (the gateway answers those).
   * `stopping` is aborted when its server begins to close (a stop: SIGTERM, Ctrl-C): a long poll
   * under way then answers at once, an empty batch as its time-out would give, and one that comes
   * later answers at once too. Its answer says `Connection: close` (the drain, index.ts), so the
   * connection ends with it, and the stop does not wait out its grace for a poll of up to 60 s.
   */
  handle(req: http.IncomingMessage, res: http.ServerResponse, stopping?: AbortSignal): boolean {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    if (url.pathname !== CONTROL_PREFIX && !url.pathname.startsWith(`${CONTROL_PREFIX}/`)) return false;
    if (stopping) this.stopping.set(req, stopping);
    void this.answer(req, url).then(
      ({ status, type, body, at }) => {
        const date = { date: (at ?? this.sb.clock.now()).toUTCString() };
        res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...date });
        res.end(body);
      },
      (error: unknown) => {
        if (this.health && isUnavailable(error))
          return this.unavailable(res, this.health.waitSeconds(), !this.health.down && isPoolWait(error));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(refusedInteger(refusals.internal())));
      },
    );
    return true;
  }

  private async answer(
    req: http.IncomingMessage,
    url: URL,
  ): Promise<{ status: number; type: string; body: string; at?: Date }> {
    const json = (value: unknown) => ({ status: 200, type: 'application/json', body: JSON.stringify(value) });
    const path = url.pathname.slice(CONTROL_PREFIX.length);
    if (req.method === 'GET' && path === '/openapi.yaml')
      return { status: 200, type: 'application/yaml', body: this.document };
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) return json(refusedInteger(refusals.bodyTooLarge(MAX_BODY_BYTES)));
      chunks.push(chunk as Buffer);
    }
    const account = await this.authenticate(req.headers.authorization);
    if (!account) return json(refusedInteger(refusals.credentials()));
    // Every route on the caller's time, its offset read first (another instance may have moved it),
    // and its answer dated on that time once the route is done (after the clock moved, the new time).
    return onAccountTime(this.sb.store, this.sb.clock, account, async () => ({
      ...(await this.route(req, url, path, account, chunks)),
      at: this.sb.clock.now(),
    }));
  }

  private async route(
    req: http.IncomingMessage,
    url: URL,
    path: string,
    account: { kind: string; id: string; apiKey: string; passphrase: string },
    chunks: Buffer[],
  ): Promise<{ status: number; type: string; body: string }> {
    const json = (value: unknown) => ({ status: 200, type: 'application/json', body: JSON.stringify(value) });
    let body: unknown = {};
    if (chunks.length) {
      // The gateway's own reading: bounded depth, no key sent twice, finite numbers.
      let parsed: ReturnType<typeof parseJson>;
      try {
        parsed = parseJson(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return json(refusedInteger(refusals.notJson()));
      }
      if ('body' in parsed) return json(refusedInteger(refusals.bodyInvalid(parsed.body)));
      if ('field' in parsed) return json(refusedInteger(refusals.invalid(parsed.field, parsed.rule)));
      body = parsed.ok;
    }
    // No text of the gateway holds a NUL character (runtime/nul-text.ts): refused as the gateway's own
    // requests are, before anything is looked up with it (PostgreSQL refuses the statement).
    const nulInBody = nulField(body);
    if (nulInBody !== undefined) return json(refusedInteger(validationRefusals.nul(nulInBody, 'Field')));
    for (const [name, value] of url.searchParams)
      if (holdsNul(name) || holdsNul(value))
        return json(refusedInteger(validationRefusals.nul(name.replaceAll('\u0000', '\\u0000'), 'Parameter')));
    // No control route takes a card number, and an address it is given is stored and shown as sent:
    // one in any field or query parameter is refused, as the gateway refuses one in a free-text field.
    const cardIn = cardNumberPath(body);
    if (cardIn !== undefined) return json(refusedInteger(refusals.cardNumber(cardIn, 'Field')));
    for (const [name, value] of url.searchParams)
      if (findCardNumber(name) || findCardNumber(value))
        return json(refusedInteger(refusals.cardNumber(name, 'Parameter')));
    // The same address policy as the gateway's fields: a control route registers no address it refuses.
    const unsafe = notifyFieldRefusal(body, this.sb.policy);
    if (unsafe) return json(refusedInteger(refusals.invalid(unsafe.field, unsafe.why)));
    const route = `${req.method} ${path
      .replace(/^\/payouts\/[^/]+\/transactions\/[^/]+\/return$/, '/payouts/:p/transactions/:t/return')
      .replace(/^\/payouts\/[^/]+\/complete$/, '/payouts/:p/complete')
      .replace(/^\/deliveries\/[^/]+$/, '/deliveries/:id')
      .replace(/^\/deliveries\/[^/]+\/resend$/, '/deliveries/:id/resend')
      .replace(/^\/direct-debits\/[^/]+\/dishonour$/, '/direct-debits/:id/dishonour')
      .replace(/^\/merchants\/[^/]+\/data$/, '/merchants/:m/data')}`;
    // Each route's parameters decoded by name: a malformed escape is the caller's, refused naming it.
    const raw = path.split('/');
    for (const [at, name] of Object.entries(PATH_PARAMETERS[route] ?? {})) {
      const value = decoded(raw[Number(at)]!);
      if (value === undefined) return json(refusedInteger(refusals.pathEncoding(name)));
      if (holdsNul(value)) return json(refusedInteger(validationRefusals.nul(name, 'Parameter')));
    }
    const parts = raw.map((part) => decoded(part) ?? part);
    switch (route) {
      case 'GET /clock':
        return json(this.clock());
      case 'POST /clock/advance':
        return json(
          this.check('Advance', body) ?? (await this.advance(account, body as { seconds?: number; days?: number })),
        );
      case 'POST /outcomes/next': {
        const bad = this.check('ForcedOutcome', body);
        if (bad) return json(bad);
        const { operationId, outcome } = body as { operationId: string; outcome: Outcome };
        await this.sb.store.transaction(async () => {
          await this.sb.store.run(
            'DELETE FROM forced_outcomes WHERE merchant_id = ? AND operation_id = ?',
            account.id,
            operationId,
          );
          await this.sb.store.run(
            'INSERT INTO forced_outcomes (merchant_id, operation_id, outcome) VALUES (?, ?, ?)',
            account.id,
            operationId,
            outcome,
          );
        });
        return json({
          responseCode: 0,
          responseMessage: `The next ${operationId} of ${account.id} will be declined: ${FORCED[outcome].message}`,
        });
      }
      case 'POST /payouts/:p/transactions/:t/return':
        return json(await this.returnPayout(account, parts[2]!, parts[4]!));
      case 'POST /payouts/:p/complete':
        return json(await this.completePayout(account, parts[2]!));
      case 'POST /direct-debits/:id/dishonour':
        return json(
          this.check('Dishonour', body) ??
            (await this.dishonour(account, parts[2]!, body as { notifyURL?: string; hashSalt?: string })),
        );
      case 'POST /notifications': {
        const bad = this.check('Trigger', body);
        if (bad) return json(bad);
        return json(await this.trigger(account, body as ControlTrigger));
      }
      case 'POST /deliveries/:id/resend': {
        const bad = this.check('Resend', body);
        if (bad) return json(bad);
        return json(await this.resend(account, parts[2]!, (body as { notifyURL?: string }).notifyURL));
      }
      case 'GET /chaos':
        return json({ responseCode: 0, chaos: await this.chaosRuns(account) });
      case 'PUT /chaos': {
        const bad = this.check('ChaosSetting', body);
        if (bad) return json(bad);
        return json(await this.setChaos(account, body as ChaosSetting));
      }
      case 'DELETE /chaos': {
        const notifyURL = url.searchParams.get('notifyURL');
        if (!notifyURL) return json(refusedInteger(refusals.required('notifyURL')));
        const runs = await this.chaosRuns(account, notifyURL);
        if (!runs.length) return json(refusedInteger(refusals.noChaos()));
        await this.sb.store.run(
          'DELETE FROM chaos_settings WHERE signer_kind = ? AND signer_id = ? AND url = ?',
          account.kind,
          account.id,
          notifyURL,
        );
        return json({ responseCode: 0, chaos: runs });
      }
      case 'GET /deliveries': {
        const after = Number(url.searchParams.get('after') ?? 0);
        const wait = Number(url.searchParams.get('waitSeconds') ?? 0);
        const latest = url.searchParams.has('latest') ? Number(url.searchParams.get('latest')) : undefined;
        if (!Number.isInteger(after) || after < 0) return json(refusedInteger(refusals.badAfter()));
        if (!Number.isInteger(wait) || wait < 0 || wait > 60) return json(refusedInteger(refusals.badWaitSeconds()));
        if (latest !== undefined && !(Number.isInteger(latest) && latest >= 1 && latest <= 100))
          return json(refusedInteger(refusals.badLatest()));
        return json({ responseCode: 0, deliveries: await this.deliveries(account, after, wait, req, latest) });
      }
      case 'GET /requests': {
        const q = url.searchParams;
        const integer = (name: string, most: number, fallback?: number) => {
          const v = q.get(name);
          if (v === null) return fallback;
          const n = /^[0-9]{1,12}$/.test(v) ? Number(v) : Number.NaN;
          return n <= most ? n : Number.NaN;
        };
        const after = integer('after', Number.MAX_SAFE_INTEGER, 0)!;
        const wait = integer('waitSeconds', 60, 0)!;
        const latest = integer('latest', 500);
        if (Number.isNaN(after)) return json(refusedInteger(refusals.badAfter()));
        if (Number.isNaN(wait)) return json(refusedInteger(refusals.badWaitSeconds()));
        if (Number.isNaN(latest ?? 0) || latest === 0)
          return json(refusedInteger(refusals.invalid('latest', 'must be an integer from 1 to 500')));
        const outcome = q.get('outcome');
        if (outcome !== null && !OUTCOMES.includes(outcome as LogOutcome))
          return json(refusedInteger(refusals.invalid('outcome', `must be one of ${OUTCOMES.join(', ')}`)));
        const times: Record<'since' | 'until', string | undefined> = { since: undefined, until: undefined };
        for (const name of ['since', 'until'] as const) {
          const v = q.get(name);
          if (v === null) continue;
          const at = /^\d{4}-\d{2}-\d{2}T[0-9:.]+Z$/.test(v) ? new Date(v) : undefined;
          if (!at || Number.isNaN(at.getTime()))
            return json(refusedInteger(refusals.invalid(name, 'must be a UTC time such as 2026-11-27T09:30:00Z')));
          times[name] = at.toISOString();
        }
        const operation = q.get('operation') ?? undefined;
        if (operation !== undefined && !/^[a-zA-Z]{1,64}$/.test(operation))
          return json(refusedInteger(refusals.invalid('operation', 'must be an operationId')));
        const filter = {
          after,
          ...(operation ? { operation } : {}),
          ...(outcome ? { outcome: outcome as LogOutcome } : {}),
          ...(times.since ? { since: times.since } : {}),
          ...(times.until ? { until: times.until } : {}),
          limit: latest ?? 100,
          ...(latest ? { latest: true } : {}),
        };
        return json({ responseCode: 0, requests: await this.requests(account, filter, wait, req) });
      }
      case 'GET /deliveries/:id': {
        const row = await this.ownDelivery(account, parts[2]!);
        return json(
          row ? { responseCode: 0, delivery: await this.delivery(row) } : refusedInteger(refusals.noSuchDelivery()),
        );
      }
      case 'DELETE /merchants/:m/data':
        return json(
          parts[2] === account.id && account.kind === 'merchant'
            ? await this.reset(account.id)
            : refusedInteger(refusals.resetsOwnOnly()),
        );
      default:
        return {
          status: 404,
          type: 'application/json',
          body: JSON.stringify(
            refusedInteger(refusals.noOperation(req.method, url.pathname, `${CONTROL_PREFIX}/openapi.yaml`)),
          ),
        };
    }
  }

  private async authenticate(
    header: string | undefined,
  ): Promise<{ kind: string; id: string; apiKey: string; passphrase: string } | undefined> {
    const match = /^Basic\s+(.+)$/i.exec(header ?? '');
    if (!match) return undefined;
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    // Credentials that hold a NUL character are no account's (no id or key holds one).
    if (colon < 0 || holdsNul(decoded)) return undefined;
    const row = await this.sb.store.get(
      'SELECT * FROM accounts WHERE id = ? AND api_key = ?',
      decoded.slice(0, colon),
      decoded.slice(colon + 1),
    );
    return row && { kind: row.kind, id: row.id, apiKey: row.api_key, passphrase: row.passphrase };
  }

  private check(schema: string, body: unknown): ReturnType<typeof refusedInteger> | undefined {
    const validate = controlValidator(schema);
    return validate(body) ? undefined : refusedInteger(refusalOf(validate.errors![0]!));
  }

  /** The caller's clock (the route runs on its time). */
  private clock() {
    const now = this.sb.clock.now();
    return {
      responseCode: 0,
      now: this.sb.clock.timestamp(),
      offsetSeconds: Math.round((now.getTime() - Date.now()) / 1000),
    };
  }

  private async advance(account: { kind: string; id: string }, by: { seconds?: number; days?: number }) {
    const ms = (by.seconds ?? 0) * 1000 + (by.days ?? 0) * 86_400_000;
    const moved = await advanceClock(this.sb.store, this.sb.clock, clockOf(account), ms, MAX_ATTEMPTS);
    if (!moved.moved)
      return refusedInteger(
        refusals.clockOutOfRange(
          by.days === undefined ? 'seconds' : by.seconds === undefined ? 'days' : 'days and seconds',
          CLOCK_RANGE_DAYS,
          Math.max(0, Math.floor((CLOCK_RANGE_MS - moved.offsetMs) / 1000)),
        ),
      );
    // The attempts due within the span are made by this run, each in turn; the answer waits for it as
    // long as one post may take (as when an advance made one attempt each), and a run slower than that
    // (receivers that do not answer) goes on after it, its attempts dated as they fell due all the same.
    const { notifier } = this.sb;
    // The caller's own deliveries: the run delivers every account's that is due.
    const before = notifier.deliveredOf(clockOf(account));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      notifier.deliverDue().catch(() => 0),
      new Promise((resolve) => {
        timer = setTimeout(resolve, this.sb.waits.postTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return { ...this.clock(), delivered: notifier.deliveredOf(clockOf(account)) - before };
  }

  /** Ends every attempt of a payout still pending, with the outcome its plan gives, and sends its notifications. */
  private async completePayout(account: { kind: string; id: string }, payoutId: string) {
    const { store, clock } = this.sb;
    const done = await store.transaction(async () => {
      const rows = await store.all(
        'SELECT t.* FROM payout_transactions t JOIN payouts p ON p.id = t.payout_id WHERE t.merchant_id = ? AND (p.id = ? OR p.reference = ?) FOR UPDATE',
        account.id,
        payoutId,
        payoutId,
      );
      const now = clock.now().getTime();
      for (const t of rows)
        await store.run(
          'UPDATE payout_transactions SET attempts = ?, notify_at = CASE WHEN notify_at IS NULL THEN NULL ELSE ? END WHERE id = ?',
          JSON.stringify(finishedBy(JSON.parse(t.attempts), now)),
          clock.timestamp(),
          t.id,
        );
      return rows.length;
    });
    if (!done) return refusedInteger(refusals.noSuchPayout());
    await this.sb.notifier.deliverDue();
    return { responseCode: 0, responseMessage: `Completed ${done} transaction(s); their notifications are queued` };
  }

  private returnPayout(account: { kind: string; id: string }, payoutId: string, transactionId: string) {
    const { store, clock, notifier } = this.sb;
    return store.transaction(async () => {
      // Locked until the commit: two returns of one transaction take turns, and the second is refused.
      const t = await store.get(
        'SELECT t.*, p.notify_url FROM payout_transactions t JOIN payouts p ON p.id = t.payout_id WHERE t.merchant_id = ? AND p.id = ? AND (t.id = ? OR t.reference = ?) FOR UPDATE',
        account.id,
        payoutId,
        transactionId,
        transactionId,
      );
      if (!t) return refusedInteger(refusals.noSuchPayoutTransaction());
      // As they stand now (payout-attempts.ts): a transaction still pending cannot be returned.
      const attempts = attemptsAt(JSON.parse(t.attempts), clock);
      const last = attempts.at(-1);
      if (last?.status !== 'approved') return refusedInteger(refusals.notReturnable(last?.status ?? 'pending'));
      last.status = 'returned';
      last.lastUpdated = clock.payoutTimestamp();
      await store.run('UPDATE payout_transactions SET attempts = ? WHERE id = ?', JSON.stringify(attempts), t.id);
      const record = { payee: JSON.parse(t.payee), transaction: JSON.parse(t.detail), payouts: attempts };
      if (t.notify_url)
        await notifier.payoutTransaction(
          { kind: 'merchant', id: account.id } as never,
          t.notify_url,
          t.payout_id,
          t.id,
          record,
        );
      return {
        responseCode: 0,
        responseMessage: t.notify_url
          ? 'Returned; its notification is queued'
          : 'Returned (the payout has no notifyURL)',
        result: record,
      };
    });
  }

  private dishonour(
    account: { kind: string; id: string; passphrase: string },
    transactionID: string,
    to: { notifyURL?: string; hashSalt?: string },
  ) {
    const { store, clock, notifier } = this.sb;
    return store.transaction(async () => {
      const row = await store.get(
        'SELECT * FROM direct_debits WHERE merchant_id = ? AND id = ? FOR UPDATE',
        account.id,
        transactionID,
      );
      if (!row) return refusedInteger(refusals.noSuchDirectDebit());
      if (row.dishonoured_at) return refusedInteger(refusals.alreadyDishonoured());
      await store.run('UPDATE direct_debits SET dishonoured_at = ? WHERE id = ?', clock.timestamp(), row.id);
      const result = directDebitResult(this.sb, (await store.get('SELECT * FROM direct_debits WHERE id = ?', row.id))!);
      if (to.notifyURL) {
        await notifier.directDebitOutcome(account as never, to.notifyURL, to.hashSalt ?? '', {
          transactionID: row.id,
          status: 'declined',
          responseCode: result.responseCode,
          responseMessage: result.responseMessage,
          custom1: result.custom1,
          custom2: result.custom2,
          custom3: result.custom3,
        });
      }
      return {
        responseCode: 0,
        responseMessage: `Dishonoured${to.notifyURL ? '; its notification is queued' : ''}`,
        result,
      };
    });
  }

  /**
   * A notification about one of the caller's objects, with a trigger's overrides: each field checked
   * against the spec's list and its rule before anything is queued, the body they make against the
   * notification's schema in the transaction that queues it (rolled back when refused).
   */
  private async trigger(account: ControlAccount, body: ControlTrigger) {
    const id = body.for ?? body.transactionID;
    if (!id) return refusedInteger(refusals.required('for'));
    const overrides = this.sb.notifier.overrides;
    const wrong = body.set && overrides.refusal(body.event, body.set);
    if (wrong) return refusedInteger(refusals.invalid(`set.${wrong.field}`, wrong.rule));
    try {
      const queued = await this.sb.store.transaction(() =>
        queueNotificationFor(
          this.sb,
          account,
          {
            event: body.event,
            id,
            ...(body.notifyURL ? { url: body.notifyURL } : {}),
            ...(body.set ? { set: body.set } : {}),
          },
          body.for === undefined ? 'transactionID' : 'for',
        ),
      );
      if ('refusal' in queued) return refusedInteger(queued.refusal);
      await this.sb.notifier.deliverDue();
      return {
        responseCode: 0,
        responseMessage: `Queued ${queued.ids.length} ${body.event} notification${queued.ids.length === 1 ? '' : 's'}`,
        deliveries: queued.ids,
      };
    } catch (error) {
      if (error instanceof OverrideRefused)
        return refusedInteger(refusals.invalid(`set.${error.refusal.field}`, error.refusal.rule));
      throw error;
    }
  }

  /** Chaos for one address of the caller's: a new run, numbered from 1 (the notifications of an old run leave it). */
  private async setChaos(account: ControlAccount, setting: ChaosSetting) {
    const { store, clock } = this.sb;
    const seed = setting.seed ?? Math.floor(Math.random() * 2 ** 31);
    await store.transaction(async () => {
      await store.run(
        'DELETE FROM chaos_settings WHERE signer_kind = ? AND signer_id = ? AND url = ?',
        account.kind,
        account.id,
        setting.notifyURL,
      );
      await store.run(
        'UPDATE notifications SET chaos_seq = NULL WHERE signer_kind = ? AND signer_id = ? AND url = ? AND chaos_seq IS NOT NULL',
        account.kind,
        account.id,
        setting.notifyURL,
      );
      await store.run(
        'INSERT INTO chaos_settings (signer_kind, signer_id, url, seed, rates, max_delay_ms, stale_seconds, next_seq, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?)',
        account.kind,
        account.id,
        setting.notifyURL,
        seed,
        JSON.stringify(setting.faults ?? DEFAULT_RATES),
        setting.maxDelayMs ?? CHAOS_DEFAULTS.maxDelayMs,
        setting.staleSeconds ?? CHAOS_DEFAULTS.staleSeconds,
        clock.timestamp(),
      );
    });
    return { responseCode: 0, chaos: await this.chaosRuns(account, setting.notifyURL) };
  }

  /** The caller's chaos runs (one address's, when named), each with its summary from the store. */
  private async chaosRuns(account: ControlAccount, notifyURL?: string) {
    const { store } = this.sb;
    const settings = await store.all(
      `SELECT * FROM chaos_settings WHERE signer_kind = ? AND signer_id = ?${notifyURL ? ' AND url = ?' : ''} ORDER BY created_at, url`,
      account.kind,
      account.id,
      ...(notifyURL ? [notifyURL] : []),
    );
    const runs = [];
    for (const setting of settings) {
      const chaos = chaosOfRow(setting);
      const of =
        'FROM notifications n WHERE n.signer_kind = ? AND n.signer_id = ? AND n.url = ? AND n.chaos_seq IS NOT NULL';
      const args = [account.kind, account.id, setting.url];
      const attempts = await store.all(
        `SELECT n.id, n.event, n.subject, a.seq AS attempt, a.status FROM delivery_attempts a JOIN notifications n ON n.id = a.notification_id WHERE a.notification_id IN (SELECT n.id ${of}) ORDER BY n.id, a.seq`,
        ...args,
      );
      const faults = await store.all(
        `SELECT p.notification_id AS id, p.attempt, p.kind, p.value FROM chaos_posts p WHERE p.notification_id IN (SELECT n.id ${of}) ORDER BY p.notification_id, p.attempt, p.n`,
        ...args,
      );
      const notifications = Number((await store.get(`SELECT count(*) AS n ${of}`, ...args))!.n);
      const tally = tallyOf(
        attempts.map((a) => ({
          id: Number(a.id),
          event: a.event,
          subject: a.subject,
          attempt: Number(a.attempt),
          status: Number(a.status),
        })),
        faults.map((f) => ({ id: Number(f.id), attempt: Number(f.attempt), kind: f.kind, value: Number(f.value) })),
      );
      runs.push({
        notifyURL: setting.url as string,
        seed: chaos.seed,
        faults: chaos.rates,
        maxDelayMs: chaos.maxDelayMs,
        staleSeconds: chaos.staleSeconds,
        notifications,
        summary: summary(tally, chaos, notifications),
        problems: tally.problems,
      });
    }
    return runs;
  }

  /** One of the caller's deliveries sent again, as a new delivery that names it. */
  private async resend(account: ControlAccount, idText: string, notifyURL?: string) {
    const queued = await this.sb.store.transaction(async () => {
      const row = await this.ownDelivery(account, idText);
      return row && (await this.sb.notifier.resend(row, notifyURL));
    });
    if (queued === undefined) return refusedInteger(refusals.noSuchDelivery());
    await this.sb.notifier.deliverDue();
    return { responseCode: 0, responseMessage: `Queued #${idText} again as #${queued}`, deliveries: [queued] };
  }

  /** The caller's own delivery of that id (another account's is none). */
  private ownDelivery(account: { kind: string; id: string }, idText: string): Promise<Row | undefined> {
    const id = Number(idText);
    if (!Number.isSafeInteger(id)) return Promise.resolve(undefined);
    return this.sb.store.get(
      'SELECT * FROM notifications WHERE id = ? AND signer_kind = ? AND signer_id = ?',
      id,
      account.kind,
      account.id,
    );
  }

  private async delivery(row: Row) {
    return {
      id: Number(row.id),
      event: row.event,
      subject: row.subject,
      url: row.url,
      body: row.body,
      headers: await this.sb.notifier.headersFor(row),
      delivered: Boolean(row.delivered),
      resentFrom: row.resent_from === null || row.resent_from === undefined ? null : Number(row.resent_from),
      nextAttemptAt:
        row.delivered || Number(row.attempts) >= MAX_ATTEMPTS ? null : onScopeTime(this.sb.clock, row.next_attempt_at),
      // Kept in the store by whichever instance made them, across restarts; with what the chaos did beside each.
      attempts: await this.attemptsOf(row),
    };
  }

  private async attemptsOf(row: Row) {
    const { store } = this.sb;
    const faults =
      row.chaos_seq === null && !(await store.get('SELECT 1 AS any FROM chaos_posts WHERE notification_id = ?', row.id))
        ? []
        : await store.all(
            'SELECT attempt, kind, value FROM chaos_posts WHERE notification_id = ? ORDER BY attempt, n',
            row.id,
          );
    return (
      await store.all(
        'SELECT seq, at, status, ms FROM delivery_attempts WHERE notification_id = ? ORDER BY seq',
        row.id,
      )
    ).map(({ seq, at, status, ms }) => {
      const chaos = faults
        .filter((f) => Number(f.attempt) === Number(seq))
        .map((f) => ({ kind: f.kind, value: Number(f.value) }));
      // Stored on its account's clock when it was made (notifier.ts): shown as it is, whatever the clock did since.
      return { at: String(at), status: Number(status), ms: Number(ms), ...(chaos.length ? { chaos } : {}) };
    });
  }

  private async deliveries(
    account: { kind: string; id: string },
    after: number,
    waitSeconds: number,
    req: http.IncomingMessage,
    latest?: number,
  ) {
    const query = async () =>
      latest === undefined
        ? this.sb.store.all(
            'SELECT * FROM notifications WHERE signer_kind = ? AND signer_id = ? AND id > ? ORDER BY id LIMIT 100',
            account.kind,
            account.id,
            after,
          )
        : (
            await this.sb.store.all(
              'SELECT * FROM notifications WHERE signer_kind = ? AND signer_id = ? AND id > ? ORDER BY id DESC LIMIT ?',
              account.kind,
              account.id,
              after,
              latest,
            )
          ).reverse();
    // Look again as soon as a notification is queued, until one of this account's arrives.
    const rows = await longPoll(
      query,
      (done) => this.sb.notifier.onQueued(done),
      waitSeconds,
      req,
      this.stopping.get(req) ?? NEVER,
    );
    return Promise.all(rows.map((row) => this.delivery(row)));
  }

  /** The caller's own request log (request-log.ts); a follow waits for lines after `after`, as deliveries do. */
  private async requests(
    account: { kind: string; id: string },
    filter: Parameters<RequestLog['list']>[1],
    waitSeconds: number,
    req: http.IncomingMessage,
  ) {
    const owner = { kind: account.kind as 'merchant' | 'partner', id: account.id };
    // Look again as soon as lines are written, until one of this account's comes.
    return longPoll(
      () => this.log.list(owner, filter),
      (done) => this.log.onWritten(done),
      waitSeconds,
      req,
      this.stopping.get(req) ?? NEVER,
    );
  }

  private reset(merchantId: string) {
    const { store } = this.sb;
    return store.transaction(async () => {
      const deleted: Record<string, number> = {};
      // The account and its settings stay; what it did goes (its notifications: those it signed).
      const tables = (await tablesWithColumn(store, 'merchant_id'))
        .filter((t) => t !== 'accounts' && t !== 'surcharge_rates')
        .map((t) => [t, 'merchant_id']);
      // What the chaos did to its notifications goes with them, and its chaos settings (settings: not counted).
      await store.run(
        "DELETE FROM chaos_posts WHERE notification_id IN (SELECT id FROM notifications WHERE signer_kind = 'merchant' AND signer_id = ?)",
        merchantId,
      );
      await store.run("DELETE FROM chaos_settings WHERE signer_kind = 'merchant' AND signer_id = ?", merchantId);
      for (const [table, column] of [...tables, ['notifications', 'signer_id']]) {
        const n = Number((await store.get(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`, merchantId))!.n);
        // Its forced outcomes go too, but they are settings, not data it made: not counted.
        if (table !== 'forced_outcomes') deleted[table!] = n;
        await store.run(`DELETE FROM ${table} WHERE ${column} = ?`, merchantId);
      }
      // Its clock goes back to real time: a clock can only move on, so a team that went too far
      // starts again here (a setting, like the forced outcomes: not counted).
      const clock = clockOf({ kind: 'merchant', id: merchantId });
      await store.run('DELETE FROM sandbox_clock WHERE name = ?', clock);
      await syncClock(store, this.sb.clock, clock);
      return { responseCode: 0, deleted };
    });
  }
}

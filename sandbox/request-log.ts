// The team's own request log: every request the gateway answered, kept in the store for the account it
// was made with (the one it authenticated as, or whose id and api key it carried when only its hash or
// its body was wrong), read through the control API (GET /_sandbox/requests, `payment-gateway logs`,
// the docs' console). A refusal is explained: the check, the field and the rule, and for a hash the
// recipe and the text it was computed over with the passphrase as a placeholder. Never an expected or
// a sent hash, nothing derived from the passphrase (an api key alone must not become a signer), never
// a card number, never another account's line. Lines are written in batches after their answers, and
// each account keeps its newest KEEP.
import { AsyncResource } from 'node:async_hooks';
import { logSafe } from '../runtime/log-line.ts';
import { constantTimeEqual } from '../runtime/recipe-hashes.ts';
import type { Accounts, GatewayRequest, RequestRecord } from '../server-stubs/index.ts';
import { protocols, servedAt } from '../server-stubs/index.ts';
import { holdsCardNumber } from './guard.ts';
import { SCENARIO_HEADER } from './scenarios.ts';
import type { Store } from './store.ts';
import type { components } from '../generated/sandbox-control.ts';

/** Lines each account keeps: older ones go as new ones come. */
export const KEEP = 1000;
/** The longest text of a line's field. */
const MOST = 500;

export type Outcome = 'approved' | 'declined' | 'pending' | 'refused';
export const OUTCOMES: readonly Outcome[] = ['approved', 'declined', 'pending', 'refused'];

/** One line of an account's log, as the control API answers it (RequestLine of sandbox/control.openapi.yaml). */
export type RequestLogEntry = components['schemas']['RequestLine'];

type Owner = { kind: 'merchant' | 'partner'; id: string };
type Pending = { record: RequestRecord; request: GatewayRequest; at: string };

/**
 * A log's text as the account reads it: through the package's one log writer (runtime/log-line.ts:
 * card numbers masked, control characters escaped), withheld whole where a spelling still holds a
 * card number, the length bounded.
 */
function shown(text: string): string {
  const safe = logSafe(text);
  if (holdsCardNumber(safe)) return '[withheld: it holds a card number]';
  return safe.length > MOST ? `${safe.slice(0, MOST)}…` : safe;
}

/** The entry with every text of it made safe (shown). */
function safeEntry(entry: Omit<RequestLogEntry, 'id'>): Omit<RequestLogEntry, 'id'> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entry))
    out[k] =
      typeof v === 'string'
        ? shown(v)
        : k === 'explanation' && v
          ? Object.fromEntries(Object.entries(v as Record<string, string>).map(([f, t]) => [f, shown(String(t))]))
          : v;
  return out as Omit<RequestLogEntry, 'id'>;
}

export const outcomeOf = (code: string | number | undefined, status: number): Outcome => {
  const n = Number(code);
  if (code === undefined || Number.isNaN(n)) return status < 400 ? 'approved' : 'refused';
  return n < 0 ? 'refused' : n === 0 ? 'approved' : n === 10 ? 'pending' : 'declined';
};

/** The body fields that say whose request it is. */
const CREDENTIAL_FIELDS = ['merchantUUID', 'partnerUUID', 'apiKey', 'accessToken'] as const;

/** The credentials a request carries, read as the gateway reads them (JSON or form body, or headers). */
function carried(
  request: GatewayRequest,
): { kind: Owner['kind']; id: string; key: string } | { token: string } | undefined {
  const h = request.headers;
  if (h['svc-merchantid'] !== undefined) {
    const key = h['svc-apikey'] ?? h['svc-api-key'];
    return key === undefined ? undefined : { kind: 'merchant', id: h['svc-merchantid'], key };
  }
  const raw =
    request.body === undefined
      ? ''
      : typeof request.body === 'string'
        ? request.body
        : Buffer.from(request.body).toString('utf8');
  if (!raw || raw.length > 1 << 20) return undefined;
  // Read in the protocol the request is in, as the gateway read it; a body it refused (a field sent
  // twice, a control character in a form field), leniently for its credentials alone.
  const protocol = protocols.choose(h, servedAt(request.url.split('?')[0]!));
  const read = protocol.read(raw);
  const body =
    'ok' in read && typeof read.ok === 'object' && read.ok !== null
      ? (read.ok as Record<string, unknown>)
      : protocol.salvage?.(raw, CREDENTIAL_FIELDS);
  if (!body) return undefined;
  const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const key = text(body.apiKey);
  const partner = text(body.partnerUUID);
  const merchant = text(body.merchantUUID);
  if (partner && key) return { kind: 'partner', id: partner, key };
  if (merchant && key) return { kind: 'merchant', id: merchant, key };
  const token = text(body.accessToken);
  return token ? { token } : undefined;
}

export class RequestLog {
  private readonly store: Store;
  private readonly accounts: Accounts;
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<() => void>();

  constructor(store: Store, accounts: Accounts) {
    this.store = store;
    this.accounts = accounts;
  }

  /** Whose line a request is: the account it was made with, or, refused before its credentials were read, the one whose id and api key it carried. */
  private async owner(record: RequestRecord, request: GatewayRequest): Promise<Owner | undefined> {
    if (record.account) return record.account;
    if (record.check === 'credentials' || record.check === undefined) return undefined;
    const c = carried(request);
    if (!c) return undefined;
    if ('token' in c) {
      const account = await this.accounts.findByAccessToken(c.token);
      return account && { kind: account.kind, id: account.id };
    }
    const account = await this.accounts.find(c.kind, c.id);
    return account && account.apiKey.length === c.key.length && constantTimeEqual(account.apiKey, c.key)
      ? { kind: account.kind, id: account.id }
      : undefined;
  }

  /**
   * One answered request (the gateway's onRequest, called before the answer is written): only noted
   * here; whose it is, its explanation and its text are made with the batch, after the answer.
   */
  record(record: RequestRecord, request: GatewayRequest): void {
    this.pending.push({ record, request, at: new Date().toISOString() });
    this.schedule(this.pending.length >= 200);
  }

  /**
   * The batch's write scheduled outside the answered request's asynchronous context (as BatchRunner's
   * steps are): it is no request's work, yet a timer made in the request carried its context, so the
   * write, up to 100 ms later, ran as the request's (its statements counted as another request's that
   * was under way then: test/sandbox/request-cost.test.ts; a failure marked as the answered one's).
   */
  private readonly schedule = AsyncResource.bind((now: boolean) => {
    if (now) setImmediate(() => void this.flush());
    else this.timer ??= setTimeout(() => void this.flush(), 100).unref();
  });

  private entryOf({ record, request, at }: Pending): Omit<RequestLogEntry, 'id'> {
    const scenario = request.headers[SCENARIO_HEADER];
    const entry: Omit<RequestLogEntry, 'id'> = {
      at,
      verb: record.verb,
      path: record.path,
      ...(record.operationId ? { operation: record.operationId } : {}),
      ...(record.method ? { method: record.method } : {}),
      ...(record.wire ? { wire: record.wire } : {}),
      status: record.status,
      ...(record.responseCode === undefined ? {} : { responseCode: String(record.responseCode) }),
      ...(record.message === undefined ? {} : { responseMessage: record.message }),
      outcome: outcomeOf(record.responseCode, record.status),
      ...(record.errorCode ? { errorCode: record.errorCode } : {}),
      ...(scenario === undefined ? {} : { scenario }),
      ms: Math.round(record.ms * 10) / 10,
    };
    const explanation = this.explanation(record);
    if (explanation) entry.explanation = explanation;
    return safeEntry(entry);
  }

  private explanation(record: RequestRecord): RequestLogEntry['explanation'] {
    if (Number(record.responseCode) >= 0 || record.check === undefined) return undefined;
    if (record.check === 'credentials' && record.explain) {
      const why = record.explain();
      return Object.fromEntries(
        Object.entries(why).filter(([, v]) => v !== undefined),
      ) as RequestLogEntry['explanation'];
    }
    return {
      check: record.check,
      ...(record.field ? { field: record.field } : {}),
      ...(record.rule ? { rule: record.rule } : {}),
    };
  }

  /** Writes what is waiting, in one transaction, and keeps each account's newest KEEP lines. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.flushing.then(async () => {
      if (!batch.length) return;
      const kept: { owner: Owner; entry: Omit<RequestLogEntry, 'id'> }[] = [];
      for (const p of batch) {
        const owner = await this.owner(p.record, p.request).catch(() => undefined);
        if (owner) kept.push({ owner, entry: this.entryOf(p) });
      }
      if (!kept.length) return;
      await this.store.transaction(async () => {
        for (const { owner, entry } of kept)
          await this.store.run(
            'INSERT INTO request_log (account_kind, account_id, at, operation, outcome, entry) VALUES (?, ?, ?, ?, ?, ?)',
            owner.kind,
            owner.id,
            entry.at,
            entry.operation ?? null,
            entry.outcome,
            JSON.stringify(entry),
          );
        for (const key of new Set(kept.map((k) => `${k.owner.kind}\n${k.owner.id}`))) {
          const [kind, id] = key.split('\n');
          const edge = await this.store.get<{ id: number }>(
            'SELECT id FROM request_log WHERE account_kind = ? AND account_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?',
            kind,
            id,
            KEEP,
          );
          if (edge)
            await this.store.run(
              'DELETE FROM request_log WHERE account_kind = ? AND account_id = ? AND id <= ?',
              kind,
              id,
              edge.id,
            );
        }
      });
      for (const listener of this.listeners) listener();
    });
    return this.flushing.catch(() => {});
  }

  /** Told when lines have been written (a follow waiting for new ones). */
  onWritten(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** An account's lines after `after`, oldest first, filtered; `latest`: the newest that many. */
  async list(
    owner: Owner,
    filter: {
      after?: number;
      operation?: string;
      outcome?: Outcome;
      since?: string;
      until?: string;
      limit: number;
      latest?: boolean;
    },
  ): Promise<RequestLogEntry[]> {
    await this.flush();
    const rows = await this.store.all<{ id: number; entry: string }>(
      `SELECT id, entry FROM request_log WHERE account_kind = ? AND account_id = ? AND id > ?
         AND (CAST(? AS TEXT) IS NULL OR operation = ?) AND (CAST(? AS TEXT) IS NULL OR outcome = ?)
         AND (CAST(? AS TEXT) IS NULL OR at >= ?) AND (CAST(? AS TEXT) IS NULL OR at <= ?)
         ORDER BY id ${filter.latest ? 'DESC' : ''} LIMIT ?`,
      owner.kind,
      owner.id,
      filter.after ?? 0,
      filter.operation ?? null,
      filter.operation ?? null,
      filter.outcome ?? null,
      filter.outcome ?? null,
      filter.since ?? null,
      filter.since ?? null,
      filter.until ?? null,
      filter.until ?? null,
      filter.limit,
    );
    const entries = rows.map((r) => ({ id: Number(r.id), ...(JSON.parse(r.entry) as Omit<RequestLogEntry, 'id'>) }));
    return filter.latest ? entries.reverse() : entries;
  }

  async close(): Promise<void> {
    await this.flush();
  }
}

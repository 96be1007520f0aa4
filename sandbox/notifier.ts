// Notifications (the spec's webhooks): queued in the store with the state change that causes them,
// then POSTed, signed as each webhook's x-operation.hashes says (SVC-MESSAGEHASH over the body, or a
// hash field in the body), retried on the spec's schedule (x-notification-delivery: after 1, 2, 4, 8
// and 16 minutes) of sandbox time, and recorded.
// Instances sharing a store share the queue (delivery-queue.ts): each claims due notifications under
// its own id for a lease, so one is posted by one instance at a time, and one whose instance died is
// claimed again when its lease runs out.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { computeHash, type HashRecipe } from '../runtime/recipe-hashes.ts';
import { hashRecipes } from '../generated/hash-recipes.ts';
import { notificationDelivery, type WebhookName } from '../generated/webhooks.ts';
import type { Account } from '../server-stubs/index.ts';
import { nodeDigests } from '../server-stubs/index.ts';
import type { Clock } from './clock.ts';
import { onScopeTime, readClock, shifted } from './clock-store.ts';
import { type Chaos, chaosOfRow, forged, planFor, type Posting, staled } from './chaos.ts';
import { claimDue, renew, settle } from './delivery-queue.ts';
import { NotificationOverrides, type OverrideRefusal, type Overrides } from './notification-overrides.ts';
import type { Row, Store } from './store.ts';
import type { Send } from './notify-send.ts';
import { addressesToNotify, type Resolve, resolvingOnce, type UrlPolicy } from './url-policy.ts';
import { DEFAULT_WAITS, type Waits } from './waits.ts';

/** The first attempt and every retry of the spec's schedule. */
const RETRY_AFTER_MS = notificationDelivery.retryAfterMinutes.map((minutes) => minutes * 60_000);
export const MAX_ATTEMPTS = RETRY_AFTER_MS.length + 1;
/** Notifications claimed at a time. */
export const CLAIM_LIMIT = 20;

/** Whose notification it is (its passphrase signs it; read from the store when not given). */
type Signer = Pick<Account, 'kind' | 'id'> & { passphrase?: string };

/** How a notification is queued beyond its body: a trigger's overrides, or the one it resends. */
export interface QueueOptions {
  set?: Overrides;
  resentFrom?: number;
  /**
   * When it fell due, in the queue's base time, when that was before now (a payout's last attempt
   * ended within a clock advance): its first attempt is then dated then (deliver). Default: now.
   */
  dueAt?: string;
}

/** A trigger's overrides make a body its notification's schema refuses. */
export class OverrideRefused extends Error {
  override readonly name = 'OverrideRefused';
  readonly refusal: OverrideRefusal;
  constructor(refusal: OverrideRefusal) {
    super(`${refusal.field}: ${refusal.rule}`);
    this.refusal = refusal;
  }
}

interface Signing {
  in: 'header' | 'body';
  name: string;
  recipe: string;
}

export class Notifier {
  private timer: NodeJS.Timeout | undefined;
  private readonly signing: Record<string, Signing>;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly send: Send;
  /** This instance's name in the queue's claims. */
  readonly instanceId = `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  private running: Promise<number> | undefined;
  /** The run that starts when the one under way ends, for those who asked meanwhile. */
  private following: Promise<number> | undefined;
  /** How long a claim holds (sandbox time), how long a post may take (the lease is the longer), how often deliveries run. */
  private readonly times: Pick<Waits, 'leaseMs' | 'postTimeoutMs' | 'deliveryEveryMs'>;

  private readonly policy: UrlPolicy;
  private readonly resolve: Resolve | undefined;
  /** The fields a trigger may set, held to the notifications' schemas. */
  readonly overrides: NotificationOverrides;

  /**
   * send: how notifications are POSTed, to the address the policy checked (notify-send.ts).
   * resolve: how a host name is resolved at each send, every address held to the policy; without it
   * (a test's send that decides where it connects) names are not resolved.
   */
  constructor(
    store: Store,
    clock: Clock,
    spec: Record<string, any>,
    send: Send,
    policy: UrlPolicy = { allowPrivate: false, allowLoopback: true },
    times: Pick<Waits, 'leaseMs' | 'postTimeoutMs' | 'deliveryEveryMs'> = DEFAULT_WAITS,
    resolve?: Resolve,
  ) {
    this.times = times;
    this.store = store;
    this.clock = clock;
    this.send = send;
    this.policy = policy;
    this.resolve = resolve;
    this.overrides = new NotificationOverrides(spec);
    this.signing = Object.fromEntries(
      Object.entries<any>(spec.webhooks).map(([event, item]) => [event, item.post['x-operation'].hashes[0]]),
    );
  }

  private recipe(name: string): HashRecipe {
    return hashRecipes[name as keyof typeof hashRecipes];
  }

  /**
   * Queues a notification; called inside the transaction of the change it reports, so that a change
   * rolled back sends nothing and one committed is never without its notification. Overrides (a
   * trigger's --set) are applied before the body is signed, and the body they make is held to the
   * notification's schema: an OverrideRefused is thrown, rolling the caller's transaction back.
   * Answers the notification's id (its delivery's, in the control API).
   */
  private async enqueue(
    event: string,
    subject: string,
    url: string,
    body: Record<string, unknown>,
    signer: Pick<Account, 'kind' | 'id'> & { passphrase?: string },
    options: QueueOptions & { hashSalt?: string } = {},
  ): Promise<number> {
    let sent = options.set ? this.overrides.apply(body, options.set) : body;
    const signing = this.signing[event]!;
    // A body-signed notification carries its hash (directDebitOutcome: the return recipe, over the hashSalt).
    if (signing.in === 'body' && !options.resentFrom) {
      const passphrase =
        signer.passphrase ??
        (await this.store.get('SELECT passphrase FROM accounts WHERE kind = ? AND id = ?', signer.kind, signer.id))
          ?.passphrase;
      sent = {
        ...sent,
        [signing.name]: computeHash(
          this.recipe(signing.recipe),
          String(passphrase ?? ''),
          { ...sent, hashSalt: options.hashSalt ?? '' },
          nodeDigests,
        ),
      };
    }
    if (options.set) {
      const bad = this.overrides.bodyRefusal(event as WebhookName, sent);
      if (bad) throw new OverrideRefused(bad);
    }
    // Its number in the chaos run of its address, when the address has one: taken in this
    // transaction (the setting's row locked until it commits), so that no two share one.
    const chaos = await this.store.get<{ seq: number }>(
      'UPDATE chaos_settings SET next_seq = next_seq + 1 WHERE signer_kind = ? AND signer_id = ? AND url = ? RETURNING next_seq - 1 AS seq',
      signer.kind,
      signer.id,
      url,
    );
    const row = await this.store.get<{ id: number }>(
      'INSERT INTO notifications (event, subject, url, body, signer_kind, signer_id, next_attempt_at, resent_from, chaos_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id',
      event,
      subject,
      url,
      JSON.stringify(sent),
      signer.kind,
      signer.id,
      options.dueAt ?? this.clock.baseTimestamp(),
      options.resentFrom ?? null,
      chaos ? Number(chaos.seq) : null,
    );
    // Told on the next turn: a watcher that reads before the commit waits for it (SQLite) or looks again (its poll).
    if (this.watchers.size)
      setImmediate(() => {
        for (const watch of this.watchers) watch();
      });
    return Number(row!.id);
  }

  /** The same notification again (Resend, the control API's resend), to its address or another: the body as first sent. */
  resend(row: Row, url?: string): Promise<number> {
    return this.enqueue(
      row.event,
      row.subject,
      url ?? row.url,
      JSON.parse(row.body),
      { kind: row.signer_kind, id: row.signer_id },
      { resentFrom: Number(row.id) },
    );
  }

  private readonly watchers = new Set<() => void>();

  /** Calls watch after each notification is queued (the control API's long poll); answers how to stop. */
  onQueued(watch: () => void): () => void {
    this.watchers.add(watch);
    return () => this.watchers.delete(watch);
  }

  merchantCreated(
    partner: Signer,
    url: string,
    fields: { requestReference: string; status: string; merchantUUID: string },
    options?: QueueOptions,
  ): Promise<number> {
    return this.enqueue(
      'merchantCreated',
      fields.requestReference,
      url,
      { event: 'merchantCreated', ...fields, completedAt: this.clock.timestamp() },
      partner,
      options,
    );
  }

  directDebitOutcome(
    merchant: Signer,
    url: string,
    hashSalt: string,
    fields: Record<string, unknown> & { transactionID: string; status: string },
    options?: QueueOptions,
  ): Promise<number> {
    const body = { event: 'directDebitOutcome', merchantUUID: merchant.id, ...fields };
    return this.enqueue('directDebitOutcome', fields.transactionID, url, body, merchant, { ...options, hashSalt });
  }

  batchNotify(
    merchant: Signer,
    url: string,
    batch: { batchUUID: string; transactions: unknown[] },
    options?: QueueOptions,
  ): Promise<number> {
    return this.enqueue(
      'batchNotify',
      batch.batchUUID,
      url,
      { event: 'batchNotify', batchUUID: batch.batchUUID, status: 'completed', transactions: batch.transactions },
      merchant,
      options,
    );
  }

  payoutTransaction(
    merchant: Signer,
    url: string,
    payoutId: string,
    transactionId: string,
    record: unknown,
    options?: QueueOptions,
  ): Promise<number> {
    return this.enqueue(
      'payoutTransaction',
      transactionId,
      url,
      { event: 'payoutTransaction', payoutId, result: record },
      merchant,
      options,
    );
  }

  /** The latest notification of this event for this subject. */
  last(event: string, subject: string): Promise<Row | undefined> {
    return this.store.get(
      'SELECT * FROM notifications WHERE event = ? AND subject = ? ORDER BY id DESC LIMIT 1',
      event,
      subject,
    );
  }

  all(): Promise<Row[]> {
    return this.store.all('SELECT * FROM notifications ORDER BY id');
  }

  /** The headers a notification is posted with: its signature when the webhook signs in a header. */
  async headersFor(n: Row): Promise<Record<string, string>> {
    const signer = await this.store.get('SELECT * FROM accounts WHERE kind = ? AND id = ?', n.signer_kind, n.signer_id);
    const signing = this.signing[n.event]!;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (signing.in === 'header' && signer)
      headers[signing.name] = computeHash(
        this.recipe(signing.recipe),
        signer.passphrase,
        JSON.parse(n.body),
        nodeDigests,
      );
    return headers;
  }

  /**
   * Sends every notification that is due and nobody else holds; answers how many were delivered.
   * A run already under way on this instance is joined rather than doubled.
   */
  deliverDue(): Promise<number> {
    if (this.stopped) return Promise.resolve(0);
    // A run under way may have looked for due notifications before the caller queued its own: the
    // caller waits for a run that starts after it asked (one, shared by all who ask meanwhile).
    if (this.running) {
      this.following ??= this.running
        .catch(() => 0)
        .then(() => {
          this.following = undefined;
          return this.deliverDue();
        });
      return this.following;
    }
    this.running = this.deliverClaimed().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Work that queues notifications as the clock passes a time (payouts whose attempts have ended), run before each delivery run. */
  private readonly dueWork: (() => Promise<unknown>)[] = [];

  onRun(work: () => Promise<unknown>): void {
    this.dueWork.push(work);
  }

  /**
   * How many notifications of each account (its clock's name, `kind:id`) this instance has delivered:
   * a caller that does not wait for a whole run counts its own by it (the control API's advance), and
   * not the other accounts' the same run delivered.
   */
  private readonly deliveredBy = new Map<string, number>();

  deliveredOf(account: string): number {
    return this.deliveredBy.get(account) ?? 0;
  }

  private async deliverClaimed(): Promise<number> {
    let delivered = 0;
    // Each host name resolved once in the run, however many attempts it makes to it (url-policy.ts).
    const resolve = this.resolve && resolvingOnce(this.resolve);
    // Work that queues notifications as time passes (each on its account's clock, payoutsDue).
    for (const work of this.dueWork) await work();
    for (;;) {
      const due = await claimDue(this.store, {
        by: this.instanceId,
        now: this.clock.baseTimestamp(),
        until: this.clock.baseTimestamp(this.times.leaseMs),
        maxAttempts: MAX_ATTEMPTS,
        limit: CLAIM_LIMIT,
      });
      if (due.length === 0) return delivered;
      // Posted side by side: the claim's whole batch ends within one post's time-out (5 s), which is
      // shorter than its lease (waits.ts), so no claim runs out while its holder is still busy with it.
      const done = await Promise.all(
        due.map(async (n) => {
          const ok = await this.deliver(n, resolve);
          if (ok) {
            const account = `${n.signer_kind}:${n.signer_id}`;
            this.deliveredBy.set(account, this.deliveredOf(account) + 1);
          }
          return ok;
        }),
      );
      delivered += done.filter(Boolean).length;
    }
  }

  /** The chaos of a notification's address, when it has a number in its run and the setting is still there. */
  private async chaosOf(n: Row): Promise<Chaos | undefined> {
    if (n.chaos_seq === null || n.chaos_seq === undefined) return undefined;
    const setting = await this.store.get(
      'SELECT * FROM chaos_settings WHERE signer_kind = ? AND signer_id = ? AND url = ?',
      n.signer_kind,
      n.signer_id,
      n.url,
    );
    return setting && chaosOfRow(setting);
  }

  /** Posts one body to the notification's address, every hop checked: the receiver's status, 0 for none. */
  private async post(n: Row, posting: Posting, resolve: Resolve | undefined): Promise<number> {
    try {
      // Every hop checked at send time: the name resolved by this run (resolvingOnce), the connection to a checked address,
      // no redirect followed.
      const to = await addressesToNotify(n.url, this.policy, resolve);
      if ('refusal' in to) throw new Error(`the URL policy forbids this address: ${to.refusal}`);
      const response = await this.send(
        n.url,
        {
          method: 'POST',
          headers: posting.headers,
          body: posting.body,
          signal: AbortSignal.timeout(this.times.postTimeoutMs),
          redirect: 'manual',
        },
        to.addresses[0]!,
      );
      await (response as { body?: ReadableStream | null }).body?.cancel();
      return response.status;
    } catch {
      return 0;
    }
  }

  /** One attempt: posted outside any transaction, then recorded while this instance still holds the claim. */
  private async deliver(n: Row, resolve: Resolve | undefined): Promise<boolean> {
    const headers = await this.headersFor(n);
    const attempt = Number(n.attempts) + 1;
    // Its account's clock as the store holds it (another instance may have moved it).
    const account = `${n.signer_kind}:${n.signer_id}`;
    const { offsetMs: offsetBefore, advancedTo } = await readClock(this.store, this.clock, account);
    const chaos = await this.chaosOf(n);
    const plan = chaos && planFor(chaos, Number(n.chaos_seq), attempt);
    const faults: { kind: string; value: number }[] = [];
    // When this attempt is made, in the base time the queue schedules in: now, or when it fell due if
    // that was within the span of its account's latest clock advance (the advance moved over it; its
    // retries due within the span follow from there, each made in this run). Stored on its account's
    // clock as it stands now, the one source of every date: it never moves after.
    const due = String(n.next_attempt_at);
    const base = advancedTo !== null && due <= advancedTo ? due : this.clock.baseTimestamp();
    if (plan?.reorder && !(await this.heldBefore(n))) return this.holdBack(n, account, base);
    if (plan?.delayMs) {
      faults.push({ kind: 'delay', value: plan.delayMs });
      await new Promise((r) => setTimeout(r, plan.delayMs));
    }
    // Still ours, for a whole lease from now: the time since the claim may have outlasted it on a busy
    // machine, and another instance posted it then (delivery-queue.ts).
    if (!(await renew(this.store, Number(n.id), this.instanceId, this.clock.baseTimestamp(this.times.leaseMs))))
      return false;
    const posting = { body: n.body, headers };
    if (plan?.badSignature) faults.push({ kind: 'bad-signature', value: await this.post(n, forged(posting), resolve) });
    if (plan?.stale) {
      const signer = await this.store.get(
        'SELECT passphrase FROM accounts WHERE kind = ? AND id = ?',
        n.signer_kind,
        n.signer_id,
      );
      const copy = staled(posting, chaos!.staleSeconds, String(signer?.passphrase ?? ''));
      if (copy) faults.push({ kind: 'stale', value: await this.post(n, copy, resolve) });
    }
    const at = onScopeTime(this.clock, base, account);
    const started = performance.now();
    const status = await this.post(n, posting, resolve);
    const ms = Math.round(performance.now() - started);
    let ok = status >= 200 && status < 300;
    if (plan?.timeout) {
      // The answer dropped, as if the time-out had passed: the receiver handled it; the gateway sends it again.
      faults.push({ kind: 'timeout', value: status });
      ok = false;
    }
    if (ok && plan?.duplicate) faults.push({ kind: 'duplicate', value: await this.post(n, posting, resolve) });
    // The spec's wait after this attempt (x-notification-delivery), from the attempt's time; after the
    // last one it is not sent again.
    const retryIn = RETRY_AFTER_MS[Number(n.attempts)] ?? 0;
    // An advance made while this attempt was posted moved the notification's next attempt back by its
    // span (clock-store.ts advance), and this settle would undo it: the retry moves back as much.
    const { offsetMs: offsetAfter } = await readClock(this.store, this.clock, account);
    const retryAt = shifted(base, retryIn - (offsetAfter - offsetBefore));
    await settle(this.store, Number(n.id), this.instanceId, { ok, status, at, retryAt });
    // The attempt's number is the count settled so far: this instance held the claim, so no other wrote it.
    await this.store.run(
      'INSERT OR IGNORE INTO delivery_attempts (notification_id, seq, at, status, ms) VALUES (?, ?, ?, ?, ?)',
      Number(n.id),
      attempt,
      at,
      status,
      ms,
    );
    for (const [i, f] of faults.entries())
      await this.store.run(
        'INSERT OR IGNORE INTO chaos_posts (notification_id, attempt, n, kind, value, at) VALUES (?, ?, ?, ?, ?, ?)',
        Number(n.id),
        attempt,
        i + 1,
        f.kind,
        f.value,
        at,
      );
    return ok;
  }

  /** Whether the chaos held this notification back already (once is its share). */
  private async heldBefore(n: Row): Promise<boolean> {
    return Boolean(
      await this.store.get("SELECT 1 AS held FROM chaos_posts WHERE notification_id = ? AND kind = 'reorder'", n.id),
    );
  }

  /**
   * Holds a notification back without an attempt, so that later ones are posted first; its claim given
   * up. The hold runs on its account's clock, from `base` (deliver's: when it fell due, if its
   * account's latest advance moved over that; else now): held within an advance's span, it falls due
   * again within the span, and the advance's run makes its attempts there, each dated when it fell
   * due, as it does a notification not held.
   */
  private async holdBack(n: Row, account: string, base: string): Promise<boolean> {
    const holdMs = Math.max(2000, 2 * this.times.deliveryEveryMs);
    await this.store.transaction(async () => {
      const { changes } = await this.store.run(
        'UPDATE notifications SET next_attempt_at = ?, claimed_by = NULL, claimed_until = NULL WHERE id = ? AND claimed_by = ? AND delivered = 0',
        shifted(base, holdMs),
        n.id,
        this.instanceId,
      );
      if (changes)
        await this.store.run(
          'INSERT OR IGNORE INTO chaos_posts (notification_id, attempt, n, kind, value, at) VALUES (?, ?, 0, ?, ?, ?)',
          Number(n.id),
          Number(n.attempts) + 1,
          'reorder',
          holdMs,
          onScopeTime(this.clock, base, account),
        );
    });
    return false;
  }

  start(intervalMs = DEFAULT_WAITS.deliveryEveryMs): void {
    // The timer has queued nothing of its own: it joins a run under way rather than asking for another.
    this.timer = setInterval(() => void (this.running ?? this.deliverDue()).catch(() => {}), intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a delivery run under way (its claims are settled before the store closes). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.stopped = true;
    // A following run may start as the one under way ends: wait until neither is left.
    while (this.running || this.following) await (this.following ?? this.running)!.catch(() => {});
  }

  private stopped = false;
}

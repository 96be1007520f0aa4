// Notifications (the spec's webhooks): queued in the store with the state change that causes them,
// then POSTed, signed as each webhook's x-operation.hashes says (SVC-MESSAGEHASH over the body, or a
// hash field in the body), retried after 1, 2, 4, 8 and 16 minutes of sandbox time, and recorded.
import { computeHash, type HashRecipe } from '../runtime/signing.ts';
import { hashRecipes } from '../generated/hash-recipes.ts';
import type { Account } from '../server-stubs/index.ts';
import { nodeDigests } from '../server-stubs/index.ts';
import type { Clock } from './clock.ts';
import type { Row, SqliteDatabase as Store } from './store.ts';
import { mayNotify, urlRefusal, type UrlPolicy } from './url-policy.ts';

const MAX_ATTEMPTS = 6;

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
  private readonly send: typeof fetch;

  /** Whether a notification may go to this URL now (the URL policy, host names resolved). */
  private readonly mayNotify: (url: string) => Promise<boolean>;

  /**
   * send: how notifications are POSTed. Given one (tests record them), it decides where it connects
   * and host names are not resolved; with the real fetch, every address a name resolves to is held
   * to the policy before sending.
   */
  constructor(store: Store, clock: Clock, spec: Record<string, any>, send?: typeof fetch, policy: UrlPolicy = { allowPrivate: false, allowLoopback: true }) {
    this.store = store;
    this.clock = clock;
    this.send = send ?? fetch;
    this.mayNotify = send ? async (url) => urlRefusal(url, policy) === undefined : (url) => mayNotify(url, policy);
    this.signing = Object.fromEntries(Object.entries<any>(spec.webhooks).map(([event, item]) => [event, item.post['x-operation'].hashes[0]]));
  }

  private recipe(name: string): HashRecipe {
    return hashRecipes[name as keyof typeof hashRecipes];
  }

  /** Queues a notification; called inside the transaction of the change it reports. */
  private enqueue(event: string, subject: string, url: string, body: Record<string, unknown>, signer: Account): void {
    this.store.run(
      'INSERT INTO notifications (event, subject, url, body, signer_kind, signer_id, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      event, subject, url, JSON.stringify(body), signer.kind, signer.id, this.clock.timestamp(),
    );
    // Told once the change that queued it has committed (the store is synchronous: after this turn).
    if (this.watchers.size) setImmediate(() => this.watchers.forEach((watch) => watch()));
  }

  private readonly watchers = new Set<() => void>();

  /** Calls watch after each notification is queued (the control API's long poll); answers how to stop. */
  onQueued(watch: () => void): () => void {
    this.watchers.add(watch);
    return () => this.watchers.delete(watch);
  }

  merchantCreated(partner: Account, url: string, fields: { requestReference: string; status: string; merchantUUID: string }): void {
    this.enqueue('merchantCreated', fields.requestReference, url, { event: 'merchantCreated', ...fields, completedAt: this.clock.timestamp() }, partner);
  }

  directDebitOutcome(merchant: Account, url: string, hashSalt: string, fields: Record<string, unknown> & { transactionID: string; status: string }): void {
    const body = { event: 'directDebitOutcome', merchantUUID: merchant.id, ...fields };
    const signing = this.signing.directDebitOutcome!;
    const hash = computeHash(this.recipe(signing.recipe), merchant.passphrase, { ...body, hashSalt }, nodeDigests);
    this.enqueue('directDebitOutcome', fields.transactionID, url, { ...body, [signing.name]: hash }, merchant);
  }

  batchNotify(merchant: Account, url: string, batch: { batchUUID: string; transactions: unknown[] }): void {
    this.enqueue('batchNotify', batch.batchUUID, url, { event: 'batchNotify', batchUUID: batch.batchUUID, status: 'completed', transactions: batch.transactions }, merchant);
  }

  payoutTransaction(merchant: Account, url: string, payoutId: string, transactionId: string, record: unknown): void {
    this.enqueue('payoutTransaction', transactionId, url, { event: 'payoutTransaction', payoutId, result: record }, merchant);
  }

  /** The latest notification of this event for this subject. */
  last(event: string, subject: string): Row | undefined {
    return this.store.get('SELECT * FROM notifications WHERE event = ? AND subject = ? ORDER BY id DESC LIMIT 1', event, subject);
  }

  all(): Row[] {
    return this.store.all('SELECT * FROM notifications ORDER BY id');
  }

  /** The headers a notification is posted with: its signature when the webhook signs in a header. */
  headersFor(n: Row): Record<string, string> {
    const signer = this.store.get('SELECT * FROM accounts WHERE kind = ? AND id = ?', n.signer_kind, n.signer_id);
    const signing = this.signing[n.event]!;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (signing.in === 'header' && signer) headers[signing.name] = computeHash(this.recipe(signing.recipe), signer.passphrase, JSON.parse(n.body), nodeDigests);
    return headers;
  }

  /** Sends every notification that is due; answers how many were delivered. */
  async deliverDue(): Promise<number> {
    const due = this.store.all('SELECT * FROM notifications WHERE delivered = 0 AND attempts < ? AND next_attempt_at <= ? ORDER BY id', MAX_ATTEMPTS, this.clock.timestamp());
    let delivered = 0;
    for (const n of due) {
      const headers = this.headersFor(n);
      let status = 0;
      try {
        if (!(await this.mayNotify(n.url))) throw new Error('the URL policy forbids this address');
        const response = await this.send(n.url, { method: 'POST', headers, body: n.body, signal: AbortSignal.timeout(5000) });
        status = response.status;
        await response.body?.cancel();
      } catch {
        status = 0;
      }
      const ok = status >= 200 && status < 300;
      const attempts = Number(n.attempts) + 1;
      const retryIn = 60_000 * 2 ** (attempts - 1);
      this.store.transaction(() =>
        this.store.run(
          'UPDATE notifications SET attempts = ?, delivered = ?, last_attempt_at = ?, last_status = ?, next_attempt_at = ? WHERE id = ?',
          attempts, ok ? 1 : 0, this.clock.timestamp(), status, this.clock.timestamp(retryIn), n.id,
        ),
      );
      if (ok) delivered++;
    }
    return delivered;
  }

  start(intervalMs = 1000): void {
    this.timer = setInterval(() => void this.deliverDue().catch(() => {}), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

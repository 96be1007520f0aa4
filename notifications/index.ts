// The receiving side of the gateway's notifications (payment-gateway-contract/notifications): parse,
// verify, de-duplicate and dispatch what the gateway POSTs to a merchant. How each notification is
// signed and dated is read from the spec (generated/webhooks.ts, x-operation.hashes and .receive) and
// computed with the spec's hash recipes (runtime/signing.ts): no rule is written here. Browser-safe.
import { hashRecipes } from '../generated/hash-recipes.ts';
import {
  notificationDelivery,
  notificationKinds,
  webhooks,
  type NotificationBodies,
  type NotificationKind,
  type WebhookName,
} from '../generated/webhooks.ts';
import { instantOf } from '../runtime/gateway-time.ts';
import { computeHash, hashesEqual, type HashRecipe } from '../runtime/signing.ts';

export {
  webhooks,
  notificationKinds,
  notificationDelivery,
  type NotificationBodies,
  type NotificationKind,
  type WebhookName,
};

/**
 * The replay window a receiver needs by default: every retry of the gateway's schedule
 * (x-notification-delivery) arrives inside it, with each post's time-out and five minutes of clock
 * skew besides. A shorter window refuses the gateway's own late retries as stale, and a receiver
 * that was down for a while then loses every notification sent meanwhile.
 */
export const DEFAULT_TOLERANCE_SECONDS =
  notificationDelivery.retryAfterMinutes.reduce((sum: number, minutes) => sum + minutes * 60, 0) +
  (notificationDelivery.retryAfterMinutes.length + 1) * notificationDelivery.timeoutSeconds +
  300;

/** One notification, discriminated by its `event`. */
export type Notification = NotificationBodies[WebhookName];

type Table = Record<
  string,
  {
    signature: { in: string; name: string; recipe: string; secret: string };
    required: readonly string[];
    key: readonly string[];
    occurredAt?: { at: string; zone: string };
    kinds?: { by: string; names: Record<string, string> };
    subject?: readonly string[];
  }
>;
const table = webhooks as unknown as Table;

export type Refusal =
  | 'malformed' // not a JSON object
  | 'unknownEvent' // event names no webhook the spec declares
  | 'missingField' // a field the webhook's schema requires is absent
  | 'missingSignature'
  | 'badSignature'
  | 'stale' // dated outside the replay window
  | 'needsHashSalt'; // directDebitOutcome is signed with the merchant's own hashSalt

/** A notification that failed a check: why, in words a log can show. */
export class NotificationError extends Error {
  override readonly name = 'NotificationError';
  readonly reason: Refusal;
  constructor(reason: Refusal, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** A field by dotted path; -1 is an array's last item. */
export function fieldAt(body: unknown, path: string): unknown {
  let value: unknown = body;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = Array.isArray(value) ? value.at(Number(part)) : (value as Record<string, unknown>)[part];
  }
  return value;
}

const text = (raw: string | Uint8Array): string => (typeof raw === 'string' ? raw : new TextDecoder().decode(raw));

/**
 * Parses a raw body into a typed notification: a JSON object whose `event` names a webhook of the spec
 * and which carries the fields that webhook's schema requires. It does not check the signature.
 */
export function parseNotification(rawBody: string | Uint8Array): Notification {
  let body: unknown;
  try {
    body = JSON.parse(text(rawBody));
  } catch {
    throw new NotificationError('malformed', 'The body is not JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new NotificationError('malformed', 'The body is not a JSON object');
  const event = (body as { event?: unknown }).event;
  if (typeof event !== 'string' || !Object.hasOwn(table, event))
    throw new NotificationError(
      'unknownEvent',
      `Field 'event' names no notification of the contract: ${JSON.stringify(event)}`,
    );
  for (const field of table[event]!.required) {
    if (!Object.hasOwn(body, field))
      throw new NotificationError('missingField', `Field '${field}' is required in a ${event} notification`);
  }
  return body as Notification;
}

/** The finer kind of a notification (payoutReturned for a returned payout attempt), if its webhook has kinds. */
export function kindOf(notification: Notification): NotificationKind | undefined {
  const kinds = table[notification.event]!.kinds;
  const value = kinds && fieldAt(notification, kinds.by);
  return kinds && typeof value === 'string' ? (kinds.names[value] as NotificationKind | undefined) : undefined;
}

/** What identifies one delivery (x-operation.receive.key): the same key again is a repeat. */
export function deliveryKey(notification: Notification): string {
  return JSON.stringify(table[notification.event]!.key.map((path) => fieldAt(notification, path) ?? null));
}

/**
 * The object a notification reports on (x-operation.receive.subject): two notifications with the same
 * subject tell of one payout transaction, one debit, one batch, one merchant request.
 */
export function subjectOf(notification: Notification): string {
  const { subject } = table[notification.event]!;
  return JSON.stringify([notification.event, ...(subject ?? []).map((path) => fieldAt(notification, path) ?? null)]);
}

/** When the notification says it happened (x-operation.receive.occurredAt), or undefined when it carries no time. */
export function occurredAt(notification: Notification): Date | undefined {
  const at = table[notification.event]!.occurredAt;
  const value = at && fieldAt(notification, at.at);
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value)) return undefined;
  return instantOf(value, at!.zone);
}

type HeaderBag = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;
function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() === lower) return Array.isArray(value) ? value[0] : (value as string | undefined);
  }
  return undefined;
}

export interface VerifyOptions {
  /**
   * The passphrase that keys the signature: the merchant's, or the partner's for the notifications the
   * spec signs with the partner's (merchantCreated). A function gets the notification to choose.
   */
  passphrase: string | ((notification: Notification) => string);
  /** directDebitOutcome: the hashSalt the merchant sent with processDDebitAuth (its hash covers it). */
  hashSalt?: string | ((notification: Notification) => string | undefined);
  /**
   * The replay window, for notifications that carry a time: older (or further ahead) is refused.
   * Default DEFAULT_TOLERANCE_SECONDS, which the gateway's whole retry schedule fits in.
   */
  toleranceSeconds?: number;
  /**
   * The time to compare with (tests; a server whose clock is not the gateway's, such as a sandbox whose
   * clock was moved on): a Date, or a function asked at each delivery. Default: now.
   */
  now?: Date | (() => Date);
}

export interface Verified<N extends Notification = Notification> {
  notification: N;
  kind: NotificationKind | undefined;
  /** Identifies this delivery: hand it to a DuplicateCheck. */
  key: string;
  /** The object it reports on: hand it to an OrderCheck with occurredAt. */
  subject: string;
  occurredAt: Date | undefined;
}

const recipe = (name: string) => hashRecipes[name as keyof typeof hashRecipes] as HashRecipe;

/** The signature a notification should carry, by the spec's recipe for its webhook. */
function expectedSignature(notification: Notification, passphrase: string, hashSalt: string | undefined): string {
  const sig = table[notification.event]!.signature;
  if (sig.in === 'header') return computeHash(recipe(sig.recipe), passphrase, notification as Record<string, unknown>);
  if (hashSalt === undefined)
    throw new NotificationError(
      'needsHashSalt',
      `A ${notification.event} notification is signed with the hashSalt you sent; pass options.hashSalt`,
    );
  return computeHash(recipe(sig.recipe), passphrase, { ...(notification as Record<string, unknown>), hashSalt });
}

/**
 * Verifies a notification as received: the raw body (before any JSON middleware re-serialises it) and
 * the request headers. Throws a NotificationError naming the check that failed; answers the typed
 * notification otherwise. Repeats pass: check `key` with a DuplicateCheck.
 */
export function verifyNotification(rawBody: string | Uint8Array, headers: HeaderBag, options: VerifyOptions): Verified {
  const notification = parseNotification(rawBody);
  const sig = table[notification.event]!.signature;
  const sent = sig.in === 'header' ? header(headers, sig.name) : (notification as Record<string, unknown>)[sig.name];
  if (typeof sent !== 'string' || !sent)
    throw new NotificationError(
      'missingSignature',
      `The ${notification.event} notification carries no ${sig.name} ${sig.in === 'header' ? 'header' : 'field'}`,
    );
  const passphrase = typeof options.passphrase === 'function' ? options.passphrase(notification) : options.passphrase;
  const hashSalt = typeof options.hashSalt === 'function' ? options.hashSalt(notification) : options.hashSalt;
  if (!hashesEqual(sent, expectedSignature(notification, passphrase, hashSalt))) {
    throw new NotificationError(
      'badSignature',
      `${sig.name} does not match the ${notification.event} notification (recipe ${sig.recipe})`,
    );
  }
  const at = occurredAt(notification);
  if (at) {
    const tolerance = (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS) * 1000;
    const now = typeof options.now === 'function' ? options.now() : (options.now ?? new Date());
    const skew = now.getTime() - at.getTime();
    if (Math.abs(skew) > tolerance)
      throw new NotificationError(
        'stale',
        `The ${notification.event} notification is dated ${Math.round(Math.abs(skew) / 1000)} s ${skew > 0 ? 'ago' : 'in the future'}, outside the ${tolerance / 1000} s window`,
      );
  }
  return {
    notification,
    kind: kindOf(notification),
    key: deliveryKey(notification),
    subject: subjectOf(notification),
    occurredAt: at,
  };
}

/**
 * The signature headers and body a notification would be sent with, for a team's own tests: what the
 * gateway would post, so that a handler can be tested without a sandbox.
 */
export function signTestNotification(
  notification: Notification,
  options: { passphrase: string; hashSalt?: string },
): { body: string; headers: Record<string, string> } {
  const sig = table[notification.event]!.signature;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (sig.in === 'header')
    return {
      body: JSON.stringify(notification),
      headers: { ...headers, [sig.name]: expectedSignature(notification, options.passphrase, undefined) },
    };
  const signed = {
    ...notification,
    [sig.name]: expectedSignature(notification, options.passphrase, options.hashSalt ?? ''),
  };
  return { body: JSON.stringify(signed), headers };
}

/**
 * The headers a notification is posted with, and only those: the media type the gateway posts, and
 * the webhook's signature header where it signs in one, taken from `given` (a delivery's headers as
 * the sandbox recorded them). Whatever else `given` names (credentials, cookies, Host, hop-by-hop
 * headers) is not the gateway's to send, and is dropped: what `listen` forwards.
 */
export function notificationHeaders(event: string, given: Readonly<Record<string, string>>): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const sig = Object.hasOwn(table, event) ? table[event]!.signature : undefined;
  if (sig?.in !== 'header') return headers;
  const name = sig.name.toLowerCase();
  for (const [key, value] of Object.entries(given))
    if (key.toLowerCase() === name && typeof value === 'string') headers[sig.name] = value;
  return headers;
}

/** Remembers delivery keys for a while, so that a repeat (a retry, a resend) is handled once. */
export interface DuplicateCheck {
  /** True the first time a key is seen (and records it); false for a repeat. */
  firstTime(key: string): boolean | Promise<boolean>;
  /** Forgets a key whose handling failed, so that the gateway's retry is handled. */
  forget?(key: string): void | Promise<void>;
}

/** An in-memory DuplicateCheck holding at most `max` keys (oldest forgotten first). Use a store shared by your servers in production. */
export function memoryDuplicateCheck(max = 10_000): DuplicateCheck {
  const seen = new Set<string>();
  return {
    firstTime(key) {
      if (seen.has(key)) return false;
      seen.add(key);
      if (seen.size > max) seen.delete(seen.values().next().value!);
      return true;
    },
    forget(key) {
      seen.delete(key);
    },
  };
}

/**
 * Remembers, for each subject, the latest time a notification about it was dated: a notification dated
 * before that arrives out of order and tells an older state (a payout transaction's approval after its
 * return), which must not overwrite the newer one.
 */
export interface OrderCheck {
  /** False when `at` is older than the latest recorded for `subject`; else records it and answers true. */
  current(subject: string, at: Date): boolean | Promise<boolean>;
}

/** An in-memory OrderCheck holding at most `max` subjects (oldest forgotten first). Use a store shared by your servers in production. */
export function memoryOrderCheck(max = 10_000): OrderCheck {
  const latest = new Map<string, number>();
  return {
    current(subject, at) {
      const seen = latest.get(subject);
      if (seen !== undefined && at.getTime() < seen) return false;
      latest.delete(subject);
      latest.set(subject, Math.max(seen ?? 0, at.getTime()));
      if (latest.size > max) latest.delete(latest.keys().next().value!);
      return true;
    },
  };
}

type ByEvent = { [E in WebhookName]: NotificationBodies[E] };
type ByKind = { [K in NotificationKind]: NotificationBodies[(typeof notificationKinds)[K]] };
type Handler<N> = (notification: N, verified: Verified) => void | Promise<void>;

/**
 * A typed dispatcher: on('payoutTransaction', …) for every payout notification, on('payoutReturned', …)
 * for the returned ones. handle() verifies, drops repeats and notifications older than one already
 * handled about the same subject, and calls the handlers; it answers what happened, for the endpoint
 * to turn into a status (2xx acknowledges; anything else makes the gateway retry).
 */
export class NotificationDispatcher {
  private readonly handlers = new Map<string, Handler<any>[]>();
  private readonly options: VerifyOptions;
  private readonly duplicates: DuplicateCheck;
  private readonly order: OrderCheck | undefined;

  /**
   * duplicates: where delivery keys are remembered (default in memory). order: where each subject's
   * latest time is remembered (default in memory); false hands every notification to the handlers,
   * however late it comes (a handler that keeps a history rather than a state).
   */
  constructor(options: VerifyOptions & { duplicates?: DuplicateCheck; order?: OrderCheck | false }) {
    this.options = options;
    this.duplicates = options.duplicates ?? memoryDuplicateCheck();
    this.order = options.order === false ? undefined : (options.order ?? memoryOrderCheck());
  }

  on<E extends WebhookName>(event: E, handler: Handler<ByEvent[E]>): this;
  on<K extends NotificationKind>(kind: K, handler: Handler<ByKind[K]>): this;
  on(name: string, handler: Handler<any>): this {
    if (!Object.hasOwn(table, name) && !Object.hasOwn(notificationKinds, name))
      throw new Error(`No notification or kind named ${name}`);
    this.handlers.set(name, [...(this.handlers.get(name) ?? []), handler]);
    return this;
  }

  /**
   * Verifies and dispatches one delivery. A refusal is answered, not thrown, so that an endpoint can
   * log it and answer 400. `duplicate` and `outdated` (older than one handled about its subject) are
   * acknowledged without calling a handler: answer them 200 too, or the gateway sends them again.
   */
  async handle(
    rawBody: string | Uint8Array,
    headers: HeaderBag,
  ): Promise<
    | { status: 'handled' | 'duplicate' | 'outdated'; verified: Verified }
    | { status: 'refused'; error: NotificationError }
  > {
    let verified: Verified;
    try {
      verified = verifyNotification(rawBody, headers, this.options);
    } catch (error) {
      if (error instanceof NotificationError) return { status: 'refused', error };
      throw error;
    }
    if (!(await this.duplicates.firstTime(verified.key))) return { status: 'duplicate', verified };
    if (this.order && verified.occurredAt && !(await this.order.current(verified.subject, verified.occurredAt)))
      return { status: 'outdated', verified };
    try {
      for (const name of [verified.notification.event, verified.kind]) {
        for (const handler of (name && this.handlers.get(name)) || []) await handler(verified.notification, verified);
      }
    } catch (error) {
      await this.duplicates.forget?.(verified.key);
      throw error;
    }
    return { status: 'handled', verified };
  }
}

// Retries that never pay twice. An operation's retry mark comes from the spec (x-method.retry, carried
// by the generated client table): `safe` operations are sent again after a lost answer; operations
// that move money are first looked up by their reference (queryCard, queryDD), and sent again only
// when the lookup finds nothing; everything else is never resent automatically. Runs in browsers.

/** How an operation may be retried (x-method.retry), with the lookup named as the client names it. */
export type RetryMark = { safe: true } | { lookup: { group: string; name: string }; by: string };

export interface RetryPolicy {
  /** Tries in all, the first included (each lookup counts as one). Default 3. */
  attempts?: number;
  /**
   * Wait before try n+1: baseDelayMs × 2^(n-1), capped at maxDelayMs, with full jitter. The wait also
   * gives a request still running at the gateway time to commit before it is looked up. Default 250 ms.
   */
  baseDelayMs?: number;
  /** Default 5000 ms. */
  maxDelayMs?: number;
  /**
   * Fill the lookup field (transactionReferenceID) with a fresh unique reference when the caller left
   * it out: without one a lost purchase cannot be looked up and is not retried. Default true.
   */
  assignReference?: boolean;
  /** Told of every retry decision (logs, metrics). */
  onRetry?: (event: RetryEvent) => void;
  /** For tests: how to wait. */
  sleep?: (ms: number) => Promise<void>;
}

export interface RetryEvent {
  operation: string;
  /** The try that just ended, from 1. */
  attempt: number;
  /** resend: sent again; lookup: asked whether it was done; recovered: it was, its record is answered; notFound: it was not, so it is sent again. */
  action: 'resend' | 'lookup' | 'recovered' | 'notFound';
  error?: unknown;
}

/** A money-moving call whose answer was lost and whose outcome could not be established: it was not sent again. */
export class GatewayOutcomeUnknownError extends Error {
  override readonly name = 'GatewayOutcomeUnknownError';
  readonly operation: string;
  /** The reference to look it up by later (queryCard / queryDD), when there is one. */
  readonly reference: string | undefined;
  constructor(operation: string, reference: string | undefined, why: string, options?: { cause: unknown }) {
    super(
      `${operation}: the answer was lost and ${why}; it was not sent again${reference ? ` (look it up by transactionReferenceID ${reference})` : ''}`,
      options,
    );
    this.operation = operation;
    this.reference = reference;
  }
}

/**
 * True when an error means the request may or may not have been done: the connection failed or timed
 * out, or something in front of the gateway answered 502, 503 or 504. A caller's own abort is not.
 */
export function isLostAnswer(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'GatewayNetworkError' || error.name === 'TimeoutError' || error.name === 'GatewayTimeoutError')
    return true;
  if (error.name === 'GatewayHttpError') return [502, 503, 504].includes((error as Error & { status: number }).status);
  return false;
}

export interface Recovery {
  lookup: string;
  reference: string;
  attempts: number;
  /**
   * Whether the transaction found was approved. A lookup answers responseCode 0 for having found it,
   * whatever became of it: a card record says declined in transactionStatus, a debit in its responseCode.
   */
  approved: boolean;
}

const recovered = new WeakMap<object, Recovery>();

/**
 * For an answer that came from the lookup after a lost answer (the lookup's own result, e.g. a
 * QueryCardResult whose transactionStatus tells approved from declined): which lookup, by which
 * reference, after how many tries. Undefined for an answer of the operation itself.
 */
export function recoveredBy(result: unknown): Recovery | undefined {
  return typeof result === 'object' && result !== null ? recovered.get(result) : undefined;
}

/** A reference no other request has: 'r' and 31 hex digits. */
export function freshReference(): string {
  return `r${globalThis.crypto.randomUUID().replace(/-/g, '').slice(1)}`;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const code = (answer: unknown) => Number((answer as { responseCode?: unknown } | null)?.responseCode);

/** Fields the lookup's record must agree on with the request, when both carry them, to be the same transaction. */
const SAME_TRANSACTION = ['transactionAmount', 'transactionCurrency'] as const;

export interface RetryCall {
  operation: string;
  mark: RetryMark | undefined;
  /** GET: safe by HTTP's definition when the spec does not mark it. */
  verb: string;
  body: Record<string, unknown> | undefined;
  send(): Promise<unknown>;
  lookup(reference: string): Promise<unknown>;
}

/** Sends a call under a retry policy, as its mark allows. */
export async function withRetry(call: RetryCall, policy: RetryPolicy): Promise<unknown> {
  const attempts = Math.max(1, policy.attempts ?? 3);
  const sleep = policy.sleep ?? defaultSleep;
  const most = policy.maxDelayMs ?? 5000;
  // A gateway that answered 503 with Retry-After is given that long (within maxDelayMs) before the next try.
  const wait = (n: number, error?: unknown) =>
    sleep(
      Math.max(
        Math.random() * Math.min(most, (policy.baseDelayMs ?? 250) * 2 ** (n - 1)),
        Math.min(most, ((error as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds ?? 0) * 1000),
      ),
    );
  const note = (attempt: number, action: RetryEvent['action'], error?: unknown) =>
    policy.onRetry?.({ operation: call.operation, attempt, action, ...(error === undefined ? {} : { error }) });
  const mark = call.mark ?? (call.verb === 'GET' ? ({ safe: true } as const) : undefined);

  if (!mark) return call.send();
  if ('safe' in mark) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call.send();
      } catch (error) {
        if (!isLostAnswer(error) || attempt >= attempts) throw error;
        note(attempt, 'resend', error);
        await wait(attempt, error);
      }
    }
  }

  const reference = call.body?.[mark.by];
  if (typeof reference !== 'string' || !reference) return call.send();
  const lookupName = `${mark.lookup.group ? `${mark.lookup.group}.` : ''}${mark.lookup.name}`;
  let lastError: unknown;
  try {
    return await call.send();
  } catch (error) {
    if (!isLostAnswer(error)) throw error;
    lastError = error;
  }
  let tries = 1;
  while (tries < attempts) {
    note(tries, 'lookup', lastError);
    await wait(tries, lastError);
    tries++;
    let found: unknown;
    try {
      found = await call.lookup(reference);
    } catch (error) {
      if (!isLostAnswer(error)) throw error;
      lastError = error;
      continue;
    }
    const answered = code(found);
    if (answered >= 0) {
      const record = found as Record<string, unknown>;
      const differs = SAME_TRANSACTION.find(
        (f) => call.body?.[f] !== undefined && record[f] !== undefined && String(call.body[f]) !== String(record[f]),
      );
      if (differs)
        throw new GatewayOutcomeUnknownError(
          call.operation,
          reference,
          `${lookupName} found another transaction under this reference (its ${differs} differs)`,
        );
      const approved =
        typeof record.transactionStatus === 'string' ? record.transactionStatus !== 'declined' : answered === 0;
      // The lost answer's own outcome, not the lookup's 0 for having found it: a card record carries it in
      // transactionResponseCode/-Message; a debit's record answers it in its own responseCode already.
      const answer =
        record.transactionResponseCode === undefined
          ? record
          : {
              ...record,
              responseCode: record.transactionResponseCode,
              responseMessage: record.transactionResponseMessage ?? record.responseMessage,
            };
      recovered.set(answer, { lookup: lookupName, reference, attempts: tries, approved });
      note(tries, 'recovered');
      return answer;
    }
    // -2: no transaction has this reference, so the lost request was not done: send it again.
    if (answered !== -2)
      throw new GatewayOutcomeUnknownError(
        call.operation,
        reference,
        `${lookupName} was refused (${String((found as { responseMessage?: unknown }).responseMessage)})`,
      );
    note(tries, 'notFound');
    if (tries >= attempts) break;
    tries++;
    try {
      return await call.send();
    } catch (error) {
      if (!isLostAnswer(error)) throw error;
      lastError = error;
    }
  }
  throw new GatewayOutcomeUnknownError(
    call.operation,
    reference,
    `no lookup established what was done within ${attempts} tries`,
    { cause: lastError },
  );
}

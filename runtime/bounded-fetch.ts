// The HTTP client of every package tool that talks to a server someone else runs: the contract suite,
// `contract --notifications`, `listen` (the endpoint and the control API) and every command that calls
// the control API (cli/commands/http-client.ts adapts it), held to what a tool may spend on one
// server. It answers as fetch does (a Response), whichever transport sends the request.
// - It never follows a redirect: a 3xx is the answer. The suite signs bodies and sends keys; a
//   server that says "go elsewhere" must not get them re-sent wherever it points.
// - It reads at most `maxBytes` of an answer, then stops reading: an endless answer costs that much.
//   An exchange may take an answer cut there (`read(..., { cut: true })`: a receiver's words shown in
//   a line) instead of failing.
// - Each exchange has `timeoutMs` to be answered whole (a silent or dripping server included), and
//   every exchange ends at `deadline` (an instant, epoch ms), whatever is under way.
// - After `giveUpAfter` exchanges in a row that got no usable answer (no answer in time, a refused or
//   dropped connection, an answer past the cap), it gives up: every later exchange fails at once with
//   the same one-line reason, so a silent server costs a few time-outs, not one per request.
// Each failure is an ExchangeFailed with one line that says what happened; no stack trace is needed
// to read it. The request goes out through node:http (runtime/http-transport.ts), or fetch when the
// caller gives `transport: fetchTransport`; either way the answer is a whole Response.
import { nodeTransport, type Outgoing, type Transport } from './http-transport.ts';

export interface ClientLimits {
  /** Time for one exchange, request sent to answer read whole. */
  timeoutMs: number;
  /** The most bytes of one answer read. */
  maxBytes: number;
  /** When every exchange ends (epoch ms), however far it has gone; none by default. */
  deadline?: number;
  /** Exchanges in a row without a usable answer before the client gives up. */
  giveUpAfter: number;
}

export const DEFAULT_LIMITS: ClientLimits = { timeoutMs: 15_000, maxBytes: 16 * 1024 * 1024, giveUpAfter: 3 };

export type FailureKind = 'timeout' | 'deadline' | 'too-large' | 'unreachable' | 'given-up';

/** An exchange that got no usable answer, in one line. */
export class ExchangeFailed extends Error {
  override readonly name = 'ExchangeFailed';
  readonly kind: FailureKind;
  constructor(kind: FailureKind, message: string) {
    super(message);
    this.kind = kind;
  }
}

/** One exchange's own bounds, within the client's (a long poll's longer wait, a smaller cap). */
export interface ExchangeBounds {
  timeoutMs?: number;
  maxBytes?: number;
  /** Past maxBytes, stop reading and answer what was read (cut: true), instead of failing. */
  cut?: boolean;
}

/** An answer read whole (at most maxBytes), before it is made a Response. */
export interface WholeAnswer {
  status: number;
  statusText: string;
  headers: Headers;
  /** The body's bytes: none for a status that has no body (204, 205, 304), as a Response reads it. */
  bytes: Uint8Array<ArrayBuffer>;
  /** Whether the answer was longer than the bytes hold (an exchange that asked to cut it). */
  cut: boolean;
}

export interface BoundedClient {
  /** fetch, bounded: the answer read whole (at most maxBytes) into the Response it returns. */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /**
   * fetch's exchange, its answer given as read: status, head and bytes, not a Response. For a caller
   * that reads only those (the contract suite's checks, 2,000 exchanges a run): making a Response of
   * the bytes and reading them back through its stream was about a tenth of the suite's CPU.
   */
  whole(input: string | URL | Request, init?: RequestInit, bounds?: ExchangeBounds): Promise<WholeAnswer>;
  /** fetch with this exchange's own bounds; `cut` says whether the answer was longer than what it holds. */
  read(
    input: string | URL | Request,
    init?: RequestInit,
    bounds?: ExchangeBounds,
  ): Promise<{ response: Response; cut: boolean }>;
  /** Why it gave up (every exchange now fails at once with it), or undefined while it goes on. */
  readonly gaveUp: string | undefined;
  readonly limits: Readonly<ClientLimits>;
}

/** Statuses whose answer has no body (a Response cannot be made with one); below 200 none reaches it. */
const NO_BODY = new Set([204, 205, 304]);
/** The status texts a Response takes (an HTTP reason-phrase: tab, space, visible ASCII, obs-text). */
const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;

const origin = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};

/** Why a connection failed, in the words of its cause (fetch's) or its own (node:http's): ECONNREFUSED, other side closed, ... */
function causeOf(error: unknown): string {
  const cause =
    (error as { cause?: { code?: string; message?: string } }).cause ?? (error as { code?: string; message?: string });
  return [cause?.code, cause?.message].filter(Boolean).join(' ') || (error as Error).message || String(error);
}

/** Methods a plain request may name as they are; any other goes through a Request, which checks and normalises it. */
const PLAIN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/**
 * The options of a RequestInit beyond method, headers, body and signal: a plain request holds none
 * (each is read, as a Request reads it, so a getter counts too); any is a Request's to check and apply.
 */
const REQUEST_OPTIONS = [
  'cache',
  'credentials',
  'integrity',
  'keepalive',
  'mode',
  'priority',
  'redirect',
  'referrer',
  'referrerPolicy',
  'window',
  'duplex',
  'dispatcher',
] as const;

/**
 * The request as the contract suite and `request()` make it (a URL, a common method, headers, a body
 * of text or bytes), ready to send without a Request. Building one and reading its body back as a
 * stream, then writing the body as bytes, took the client 279 µs of CPU per exchange against 247 µs
 * without (6,000 exchanges with a trivial server, four runs each, in turns), and a contract run
 * against the sandbox 2.95 s against 2.81 s (three each, in turns). Anything else is undefined, and
 * goes through a Request, which refuses what fetch refuses: a Request, a stream or form body, any
 * other option, a URL with credentials, a GET with a body, a method not written as fetch sends it.
 */
function plainRequest(input: string | URL | Request, init: RequestInit): Outgoing | undefined {
  if (input instanceof Request) return undefined;
  for (const option of REQUEST_OPTIONS) if ((init as Record<string, unknown>)[option] !== undefined) return undefined;
  if (init.signal != null && !(init.signal instanceof AbortSignal)) return undefined;
  const method = init.method === undefined ? 'GET' : init.method;
  if (!PLAIN_METHODS.has(method)) return undefined;
  const given = init.body ?? undefined;
  let body: string | Uint8Array<ArrayBuffer> | undefined;
  if (given === undefined || typeof given === 'string') body = given;
  // Copied, as a Request copies it: the caller may fill its buffer again before the socket takes it
  // (a Buffer's own slice() would share its memory).
  else if (given instanceof Uint8Array && given.buffer instanceof ArrayBuffer) body = new Uint8Array(given);
  else return undefined;
  if (body !== undefined && (method === 'GET' || method === 'HEAD')) return undefined;
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return undefined;
  }
  if (url.username || url.password) return undefined;
  const headers = new Headers(init.headers);
  // What a Request adds to a text body sent with no type.
  if (typeof body === 'string' && !headers.has('content-type')) headers.set('content-type', 'text/plain;charset=UTF-8');
  return { url: url.href, method, headers, body };
}

export function boundedClient(given: Partial<ClientLimits> & { transport?: Transport } = {}): BoundedClient {
  const { transport = nodeTransport, ...bounds } = given;
  const limits: ClientLimits = { ...DEFAULT_LIMITS, ...bounds };
  let failedInARow = 0;
  let gaveUp: string | undefined;

  const failed = (kind: FailureKind, message: string): never => {
    if (kind === 'deadline') gaveUp ??= message;
    else if (kind !== 'given-up' && ++failedInARow >= limits.giveUpAfter)
      gaveUp ??= `gave up after ${failedInARow} exchanges in a row without an answer, the last: ${message}`;
    throw new ExchangeFailed(kind, message);
  };

  async function exchange(
    input: string | URL | Request,
    init: RequestInit = {},
    bounds: ExchangeBounds = {},
  ): Promise<{ response: Response; cut: boolean }> {
    const answer = await whole(input, init, bounds);
    const response = new Response(NO_BODY.has(answer.status) ? null : answer.bytes, {
      status: answer.status,
      statusText: answer.statusText,
      headers: answer.headers,
    });
    return { response, cut: answer.cut };
  }

  async function whole(
    input: string | URL | Request,
    init: RequestInit = {},
    bounds: ExchangeBounds = {},
  ): Promise<WholeAnswer> {
    if (gaveUp) throw new ExchangeFailed('given-up', gaveUp);
    const timeoutMs = bounds.timeoutMs ?? limits.timeoutMs;
    const maxBytes = bounds.maxBytes ?? limits.maxBytes;
    const plain = plainRequest(input, init);
    const request = plain ?? new Request(input, init);
    const where = origin(request.url);
    const left = limits.deadline === undefined ? Number.POSITIVE_INFINITY : limits.deadline - Date.now();
    if (left <= 0) failed('deadline', `the run's deadline passed before a request to ${where}`);
    // One controller ends the exchange, whichever comes first: the time left, the answer past its cap,
    // or the caller's own signal (AbortSignal.any and AbortSignal.timeout cost a timer and a listener
    // list each per exchange: the suite makes thousands).
    const stop = new AbortController();
    let timedOutHere = false;
    const timer = setTimeout(
      () => {
        timedOutHere = true;
        stop.abort();
      },
      Math.max(1, Math.min(timeoutMs, left)),
    );
    const callers = init.signal ?? (plain ? undefined : (request as Request).signal);
    const callerAborted = () => stop.abort(callers?.reason);
    if (callers?.aborted) callerAborted();
    else callers?.addEventListener('abort', callerAborted, { once: true });
    try {
      return await readWhole();
    } finally {
      clearTimeout(timer);
      callers?.removeEventListener('abort', callerAborted);
    }

    async function readWhole(): Promise<WholeAnswer> {
      const timedOut = () =>
        left < timeoutMs
          ? failed('deadline', `the run's deadline passed while ${where} was answering`)
          : failed('timeout', `no whole answer from ${where} within ${timeoutMs / 1000} s`);
      let answered: Awaited<ReturnType<Transport>>;
      try {
        // Never followed: a redirect's Location is not sent what this request carries.
        answered = await transport(request, stop.signal);
      } catch (error) {
        if (timedOutHere) return timedOut();
        if (callers?.aborted) throw callers.reason ?? error;
        return failed('unreachable', `${where} could not be reached (${causeOf(error)})`);
      }
      // A Response holds only what HTTP defines (200 to 599); fetch hands on any three digits.
      if (answered.status < 200 || answered.status > 599) {
        stop.abort();
        return failed('unreachable', `${where} answered status ${answered.status}, which HTTP does not define`);
      }
      const declared = Number(answered.headers.get('content-length') ?? Number.NaN);
      if (declared > maxBytes && !bounds.cut) {
        stop.abort();
        return failed('too-large', `the answer from ${where} is ${declared} bytes, more than ${maxBytes} read`);
      }
      const chunks: Uint8Array[] = [];
      let size = 0;
      let cut = false;
      try {
        for await (const chunk of answered.body ?? []) {
          if (size + chunk.byteLength > maxBytes) {
            stop.abort();
            if (!bounds.cut)
              return failed('too-large', `the answer from ${where} passed ${maxBytes} bytes; reading stopped`);
            chunks.push(chunk.subarray(0, maxBytes - size));
            size = maxBytes;
            cut = true;
            break;
          }
          size += chunk.byteLength;
          chunks.push(chunk);
        }
      } catch (error) {
        if (error instanceof ExchangeFailed) throw error;
        if (timedOutHere) return timedOut();
        if (callers?.aborted) throw callers.reason ?? error;
        return failed('unreachable', `the answer from ${where} was cut off (${causeOf(error)})`);
      }
      failedInARow = 0;
      const bytes = new Uint8Array(size);
      let at = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, at);
        at += chunk.byteLength;
      }
      // A status text a Response refuses (fetch's rule, a reason-phrase) fails the exchange as making one did.
      if (!REASON_PHRASE.test(answered.statusText))
        new Response(null, { status: answered.status, statusText: answered.statusText });
      const empty = NO_BODY.has(answered.status);
      return {
        status: answered.status,
        statusText: answered.statusText,
        headers: answered.headers,
        bytes: empty ? new Uint8Array(0) : bytes,
        cut,
      };
    }
  }

  return {
    fetch: async (input, init) => (await exchange(input, init)).response,
    whole,
    read: exchange,
    get gaveUp() {
      return gaveUp;
    },
    limits,
  };
}

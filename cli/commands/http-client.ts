// How the commands talk HTTP to what the user named (their endpoint, the sandbox): through the
// package's one bounded client (runtime/bounded-fetch.ts). A redirect is an answer, never followed (its
// target was never named); an answer is read up to a cap; every exchange ends by its time-out, whatever
// the other side does; a failure is one line (ExchangeFailed). What the answers say is others' text:
// the commands print it through cli-kit, which makes every line safe (runtime/log-line.ts).
import { type BoundedClient, boundedClient, ExchangeFailed } from '../../runtime/bounded-fetch.ts';

export { ExchangeFailed };

export interface Bounds {
  /** How long the whole exchange may take, the body's reading included. */
  timeoutMs: number;
  /** The most of an answer's body that is read. */
  maxBytes: number;
  /** Ends the request early (the command is stopping). */
  signal?: AbortSignal;
}

export interface Answer {
  status: number;
  statusText: string;
  /** The body as text, cut at maxBytes. */
  text: string;
  /** Whether the body was longer than maxBytes. */
  cut: boolean;
  headers: Headers;
}

/**
 * A client for one command's exchanges with one party: after `giveUpAfter` in a row without an answer
 * (none in time, refused, dropped, past a cap) every later one fails at once with the same line.
 */
export const commandClient = (giveUpAfter: number): BoundedClient => boundedClient({ giveUpAfter });

/** Whether a failure is the other side's silence: no whole answer within the time-out. */
export const isTimeout = (error: unknown): boolean => error instanceof ExchangeFailed && error.kind === 'timeout';

/** One exchange within its bounds: its answer (cut at maxBytes), or an ExchangeFailed (or the stop's abort). */
export async function request(client: BoundedClient, url: string, init: RequestInit, bounds: Bounds): Promise<Answer> {
  const { response, cut } = await client.read(
    url,
    { ...init, ...(bounds.signal ? { signal: bounds.signal } : {}) },
    { timeoutMs: bounds.timeoutMs, maxBytes: bounds.maxBytes, cut: true },
  );
  return {
    status: response.status,
    statusText: response.statusText,
    text: await response.text(),
    cut,
    headers: response.headers,
  };
}

/**
 * A fetch for a generated client (openapi-fetch) through `client`, each exchange held to the bounds
 * its request is given: the request's own signal (a long poll's hang-up) and the stop's end it early;
 * an answer past the cap fails.
 */
export function boundedFetch(
  client: BoundedClient,
  bounds: (request: Request) => Bounds,
): (request: Request) => Promise<Response> {
  return async (req) => {
    const b = bounds(req);
    const signal = b.signal ? AbortSignal.any([req.signal, b.signal]) : req.signal;
    return (await client.read(req, { signal }, { timeoutMs: b.timeoutMs, maxBytes: b.maxBytes })).response;
  };
}

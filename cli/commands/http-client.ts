// How the commands talk HTTP to what the user named (their endpoint, the sandbox): a redirect is an
// answer, never followed (its target was never named); an answer's body is read up to a cap, the rest
// dropped unread; every request ends by its deadline, whatever the other side does.
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

/** A request whose deadline passed: the other side took longer than timeoutMs. */
export class TimedOut extends Error {
  override readonly name = 'TimedOut';
}

const signalOf = (bounds: Bounds) =>
  bounds.signal
    ? AbortSignal.any([bounds.signal, AbortSignal.timeout(bounds.timeoutMs)])
    : AbortSignal.timeout(bounds.timeoutMs);

async function readCapped(
  response: Response,
  maxBytes: number,
): Promise<{ bytes: Uint8Array<ArrayBuffer>; cut: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { bytes: new Uint8Array(), cut: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: concat(chunks, size), cut: false };
    const room = maxBytes - size;
    chunks.push(value.byteLength > room ? value.subarray(0, room) : value);
    size += Math.min(value.byteLength, room);
    if (value.byteLength > room) {
      await reader.cancel().catch(() => {});
      return { bytes: concat(chunks, size), cut: true };
    }
  }
}

function concat(chunks: Uint8Array[], size: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** One request within its bounds: its answer, or a TimedOut (or the network's error). */
export async function request(url: string, init: RequestInit, bounds: Bounds): Promise<Answer> {
  const signal = signalOf(bounds);
  try {
    const response = await fetch(url, { ...init, redirect: 'manual', signal });
    const { bytes, cut } = await readCapped(response, bounds.maxBytes);
    return {
      status: response.status,
      statusText: response.statusText,
      text: new TextDecoder().decode(bytes),
      cut,
      headers: response.headers,
    };
  } catch (error) {
    if (signal.aborted && !bounds.signal?.aborted)
      throw new TimedOut(`no answer within ${Math.round(bounds.timeoutMs / 100) / 10} s`);
    throw error;
  }
}

/**
 * A fetch for a generated client (openapi-fetch) held to the same bounds: the request's own signal
 * (a long poll's hang-up) joins the deadline; the answer is re-made from its capped body.
 */
export function boundedFetch(bounds: (request: Request) => Bounds): (request: Request) => Promise<Response> {
  return async (req) => {
    const b = bounds(req);
    const signal = AbortSignal.any([req.signal, AbortSignal.timeout(b.timeoutMs), ...(b.signal ? [b.signal] : [])]);
    const response = await fetch(req, { redirect: 'manual', signal });
    const { bytes, cut } = await readCapped(response, b.maxBytes);
    if (cut) throw new Error(`the answer of ${new URL(req.url).pathname} is larger than ${b.maxBytes} bytes`);
    return new Response(bytes.byteLength ? bytes : null, { status: response.status, headers: response.headers });
  };
}

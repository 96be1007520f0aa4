// The node:http adapter: the default server. It reads at most what the path's operations accept,
// hands the request to the gateway core and writes its response.
import type * as Http from 'node:http';
import type { Gateway } from '../core/gateway.ts';
import { refusalResponse, refusals } from '../core/refusals.ts';
import { splitUrl } from '../core/request.ts';
import { chooseLogger } from '../core/log.ts';
import type { GatewayResponse, Logger } from '../core/types.ts';
import { type ClientPrefixes, ConnectionShares, DEFAULT_PREFIXES } from './clients.ts';
import { http } from '../../runtime/node-http.ts';
import { answerUnreadable } from './unreadable.ts';

/** What answering a request needs besides the gateway: how long a streamed answer may stall, and where a cut one is told. */
export interface AnswerOptions {
  /** See NodeServerOptions.answerStallTimeout. */
  answerStallTimeout?: number;
  /** See NodeServerOptions.logger. */
  logger?: Logger | false;
}

function send(
  res: Http.ServerResponse,
  response: GatewayResponse,
  options: AnswerOptions = {},
  req?: Http.IncomingMessage,
): void {
  // A string body stays a string: node:http then writes head and body in one write() call.
  const { body } = response;
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
    const stallMs = options.answerStallTimeout ?? serverDefaults.answerStallTimeout;
    // The one trace of a download the server ended: one line, through the server's logger (which
    // masks card numbers and escapes what the caller wrote), naming the request, not its body.
    const stalled = () =>
      chooseLogger(options.logger).warn('streamed answer cut: its client took none of it', {
        verb: req?.method,
        path: req ? splitUrl(req.url ?? '/').pathname : undefined,
        status: response.status,
        stalledMs: stallMs,
      });
    return void stream(res, response.status, response.headers, body, stallMs, stalled);
  }
  res.writeHead(response.status, {
    ...response.headers,
    'content-length': typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength,
  });
  res.end(body);
}

/**
 * A streamed answer, chunked, a chunk at a time as the socket takes it (back-pressure: the source is
 * read only as fast as the client reads, so memory holds a chunk or two whatever the file's size).
 * A client that goes away ends the source; a source that fails ends the connection, so a cut file
 * is never taken for a whole one. A client that stops taking the answer (a chunk written and none of
 * it sent on for `stallMs`) has its connection ended too: otherwise nothing would ever end it, and it
 * would keep the source's buffers and the socket for as long as it stayed connected.
 */
async function stream(
  res: Http.ServerResponse,
  status: number,
  headers: Record<string, string>,
  chunks: AsyncIterable<Uint8Array>,
  stallMs: number,
  stalled: () => void,
): Promise<void> {
  res.writeHead(status, headers);
  // When the socket last sent on a chunk written (each write's callback): the client's progress.
  let progressed = Date.now();
  const sent = () => {
    progressed = Date.now();
  };
  try {
    for await (const chunk of chunks) {
      if (res.destroyed) break;
      if (!res.write(chunk, sent) && !(await writable(res, stallMs, () => progressed))) {
        res.destroy(); // stalled: the source is ended by the loop's break
        stalled();
        break;
      }
    }
    res.end();
  } catch {
    // The gateway has logged why; the client sees the connection end before the chunked body does.
    res.destroy();
  }
}

/**
 * Resolves true when the response can take more (drained) or is closed; false when nothing written
 * was sent on for `stallMs` while it waited (`progressed`: when something last was).
 */
const writable = (res: Http.ServerResponse, stallMs: number, progressed: () => number) =>
  new Promise<boolean>((resolve) => {
    let timer: NodeJS.Timeout;
    const done = (taking: boolean) => {
      clearTimeout(timer);
      res.off('drain', drained);
      res.off('close', drained);
      resolve(taking);
    };
    const drained = () => done(true);
    const check = () => {
      const idle = Date.now() - progressed();
      if (idle >= stallMs) done(false);
      else timer = setTimeout(check, stallMs - idle);
    };
    res.on('drain', drained);
    res.on('close', drained);
    timer = setTimeout(check, stallMs);
  });

const failed = () => refusalResponse(undefined, refusals.internal());

/** Hands a request whose body is already read to the core and writes the answer. */
export function answerRequest(
  gateway: Gateway,
  req: Http.IncomingMessage,
  res: Http.ServerResponse,
  body: Buffer | string | undefined,
  options: AnswerOptions = {},
): void {
  const headers = req.headers as Record<string, string | undefined>;
  let response: GatewayResponse | Promise<GatewayResponse>;
  try {
    response = gateway.respond({ verb: req.method ?? 'GET', url: req.url ?? '/', headers, body });
  } catch {
    response = failed();
  }
  if (response instanceof Promise)
    response.then(
      (r) => send(res, r, options, req),
      () => send(res, failed()),
    );
  else send(res, response, options, req);
}

/** After a 413, what is still read (and dropped) so that the refusal is not lost to a reset. */
const DRAIN_BYTES = 4 * 1024 * 1024;
const DRAIN_MS = 2_000;

/**
 * Refuses a body that is too large while it is being read. The answer is written at once, with
 * `connection: close`; the rest of the body is then read and dropped for a little while (up to 4 MiB
 * or 2 s) before the socket is closed: closing a socket with unread data makes the kernel send a
 * reset, and a client still sending then loses the 413 it was sent.
 */
function refuseTooLarge(gateway: Gateway, req: Http.IncomingMessage, res: Http.ServerResponse, limit: number): void {
  const headers = req.headers as Record<string, string | undefined>;
  const response = gateway.refusal(splitUrl(req.url ?? '/').pathname, headers, refusals.bodyTooLarge(limit));
  response.headers.connection = 'close';
  send(res, response);
  req.removeAllListeners('data');
  req.removeAllListeners('end');
  let dropped = 0;
  const close = () => req.socket.destroy();
  const timer = setTimeout(close, DRAIN_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DRAIN_BYTES) close();
  });
  req.on('end', () => clearTimeout(timer));
  req.resume();
}

/**
 * How far into a body declared (Content-Length) past every limit of its path the method that names
 * its limit is looked for. Such a body is refused whatever it names; its first bytes only choose
 * the limit the 413 names, so no more than this is read for them.
 */
export const METHOD_WITHIN_BYTES = 64 * 1024;

/**
 * Reads the body, refusing it as soon as it passes what its operation accepts, then answers. Until
 * the body names its method it may be as large as the path's smallest limit; past that, the method
 * named in what was read decides (processBatch may send 16 MiB on /post, processCard 1 MiB).
 *
 * A declared length (Content-Length) past what the path takes is refused before anything is read
 * where the path has one limit. Where its methods' limits differ, a body declared past the smallest
 * limit is refused as soon as its first bytes name a method whose limit is below the declared
 * length, so that the 413 names the limit of the operation called (processCard's 1 MiB, not
 * processBatch's 16 MiB). A method not named by the smallest limit (by its first 64 KiB,
 * METHOD_WITHIN_BYTES, when the length declared is past every limit) leaves that smallest limit,
 * and the body is refused with it. The bytes are looked at each time they have doubled, so the
 * look costs at most twice what is read.
 */
export function readAndAnswer(
  gateway: Gateway,
  req: Http.IncomingMessage,
  res: Http.ServerResponse,
  options: AnswerOptions = {},
): void {
  const pathname = splitUrl(req.url ?? '/').pathname;
  const most = gateway.readLimit(pathname);
  const base = gateway.bodyLimit(pathname);
  let limit = base;
  let raised = limit === most;
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > most && raised) {
    refuseTooLarge(gateway, req, res, most);
    return;
  }
  // How much of the body its method is looked for in: a body declared past every limit is refused
  // whatever it names, so only its first bytes are read for the name.
  const within = declared > most ? Math.min(METHOD_WITHIN_BYTES, base) : base;
  const chunks: Buffer[] = [];
  let size = 0;
  // The body's first bytes (up to `within`) as text, made of the chunks looked at so far, while its
  // method may still raise the limit; looked at again once it is twice as long as at the last look.
  let head = '';
  let looked = 0;
  let lookAt = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    chunks.push(chunk);
    if (!raised && (size > limit || declared > limit)) {
      for (; looked < chunks.length && head.length < within; looked++)
        head += chunks[looked]!.toString('latin1', 0, Math.min(chunks[looked]!.length, within - head.length));
      // Nothing read later can name the method: the head is as long as it may be, or past the limit.
      const last = head.length >= within || size > limit;
      if (head.length >= lookAt || last) {
        lookAt = Math.max(2 * head.length, 1024);
        const named = gateway.namedLimit(pathname, head);
        if (named !== undefined || last) {
          raised = true;
          limit = named ?? base;
        }
      }
    }
    if (size > limit || (raised && declared > limit)) refuseTooLarge(gateway, req, res, limit);
  });
  req.on('end', () => {
    if (size <= limit) answerRequest(gateway, req, res, chunks.length > 1 ? Buffer.concat(chunks) : chunks[0], options);
  });
}

export function createNodeHandler(gateway: Gateway, options: AnswerOptions = {}): Http.RequestListener {
  const stall = options.answerStallTimeout;
  // A timer runs a longer wait after 1 ms: the opposite of what was asked, so it is refused here.
  if (stall !== undefined && !(Number.isSafeInteger(stall) && stall >= 1 && stall <= 2_147_483_647))
    throw new RangeError(`answerStallTimeout must be whole milliseconds from 1 to 2147483647, not ${stall}`);
  // The logger chosen once (the one given, none for false, else the console as the stubs' is chosen).
  const answer: AnswerOptions = { ...options, logger: chooseLogger(options.logger) };
  return (req, res) => readAndAnswer(gateway, req, res, answer);
}

/** The server's limits on time and connections; each has a default chosen below. */
export interface NodeServerOptions {
  /** The request line and headers must arrive within this (slow-header attacks). Default 10 s. */
  headersTimeout?: number;
  /** The whole request, body included, must arrive within this (slow-body attacks). Default 30 s. */
  requestTimeout?: number;
  /** An idle keep-alive connection is closed after this. Default 65 s: longer than load balancers' 60 s. */
  keepAliveTimeout?: number;
  /**
   * A streamed answer (the settlement zip) whose client takes none of it for this long (a chunk
   * written, and none of what waits sent on) has its connection closed, its body cut short. Default
   * 60 s, a load balancer's idle time-out: a reader that slow is cut there as well.
   */
  answerStallTimeout?: number;
  /**
   * Where the server tells what it did that no answer shows: a streamed answer cut for a stalled
   * client (one warning line). As createGateway's `logger`: an object with the levels, or false for
   * none; by default the console in development, none in production and in a test run.
   */
  logger?: Logger | false;
  /** Connections beyond this many are refused (closed at once). Default 1024. */
  maxConnections?: number;
  /**
   * Connections one client may hold at once; its connections beyond are closed at once, so that one
   * client (a thousand idle sockets) cannot take every connection from the others. A client is an
   * address's prefix, not the address (clients.ts): IPv4 /32, IPv6 /64 (a host picks any address of
   * its /64), an IPv4-mapped address as its IPv4 host. Default maxConnections / 2 (512): one client
   * alone may still open many (a load test from one machine). Behind a proxy or load balancer every
   * client has its address: give maxConnections here, and let the proxy share.
   */
  maxConnectionsPerClient?: number;
  /**
   * Connections kept for clients that hold none: past maxConnections less this, a client that holds
   * any is let in no more, so that a machine counting as several clients (its IPv4 and its IPv6, a
   * few /64s) still leaves room for new ones. Default maxConnections / 4 (256); 0 when one client may
   * hold every connection (maxConnectionsPerClient at maxConnections: behind a proxy).
   */
  keepForNewClients?: number;
  /** How much of an address names one client: `{ ipv4: 32, ipv6: 64 }` by default. */
  clientPrefixes?: ClientPrefixes;
}

export const serverDefaults: Required<
  Omit<NodeServerOptions, 'maxConnectionsPerClient' | 'keepForNewClients' | 'clientPrefixes' | 'logger'>
> = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 65_000,
  answerStallTimeout: 60_000,
  maxConnections: 1024,
};

/** Holds each client to its share of connections, the cap included, however connections reach the server. */
function shareConnections(server: Http.Server, shares: ConnectionShares): void {
  server.on('connection', (socket) => {
    const client = shares.admit(socket.remoteAddress);
    if (client === undefined) {
      socket.destroy();
      return;
    }
    socket.once('close', () => shares.release(client));
  });
}

export function createNodeServer(gateway: Gateway, options: NodeServerOptions = {}): Http.Server {
  const o = { ...serverDefaults, ...options };
  // Node checks the header and request time-outs every connectionsCheckingInterval (30 s by default,
  // which let a slow-header socket live 30 s whatever headersTimeout said): check every second.
  const connectionsCheckingInterval = Math.min(1_000, o.headersTimeout, o.requestTimeout);
  const server = http.createServer(
    {
      requestTimeout: o.requestTimeout,
      headersTimeout: o.headersTimeout,
      keepAliveTimeout: o.keepAliveTimeout,
      connectionsCheckingInterval,
    },
    createNodeHandler(gateway, {
      answerStallTimeout: o.answerStallTimeout,
      ...(options.logger !== undefined && { logger: options.logger }),
    }),
  );
  server.maxConnections = o.maxConnections;
  server.on('clientError', answerUnreadable(gateway));
  // A client that half-closes after sending still wants its answer (RFC 9112 9.6: a half-closed
  // connection neither ends a request nor says the client has lost interest). Node's default ends the
  // connection as soon as the client's side ends, which lost every answer made asynchronously (a
  // streamed settlement zip); with this it finishes the answer under way, then ends the connection.
  // The property is node:http's own (lib/_http_server.js), not in its type declarations;
  // test/hardening/half-close.test.ts fails if it stops working.
  (server as Http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  const perClient = options.maxConnectionsPerClient ?? Math.max(1, Math.floor(o.maxConnections / 2));
  const keepForNew =
    options.keepForNewClients ?? (perClient >= o.maxConnections ? 0 : Math.floor(o.maxConnections / 4));
  shareConnections(
    server,
    new ConnectionShares(
      { maxConnections: o.maxConnections, perClient, keepForNew, newClientShare: 1 },
      options.clientPrefixes ?? DEFAULT_PREFIXES,
    ),
  );
  return server;
}

// Hostile HTTP parties for the tests of the package's tools as clients (test/cli/hostile-servers.test.ts,
// the fuzz run): a server on loopback that answers as a mode says (redirects to a catcher, endless,
// silent, dripping, dropped, or text built to break a terminal and a log), and the checks every line a
// tool printed must pass.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { findCardNumber } from '../../runtime/card-numbers.ts';

/** What a hostile party says: a card number, a screen-clearing escape, a title change, a forged line, BiDi and a lone surrogate. */
export const HOSTILE_TEXT =
  'Approved 4564 7100 0000 0004\u001b[2J\u001b]0;owned\u0007\nforged line\r\u2028\u202e\ud800 done';
/** Text a terminal would act on, or that forges a line: none of it may be printed raw. */
export const RAW = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])/u;

export const MODES = ['redirect', 'endless', 'silent', 'drip', 'drop', 'hostile', 'ok'] as const;
export type Mode = (typeof MODES)[number];

/** The servers a test started, to close; what they saw. */
export interface Parties {
  servers: http.Server[];
  /** Requests that reached the catcher: every one a redirect followed. */
  caught: string[];
  /** The most bytes one endless answer wrote before its reader stopped. */
  mostWritten: number;
  catcherUrl: string;
}

export async function startParties(): Promise<Parties> {
  const parties: Parties = { servers: [], caught: [], mostWritten: 0, catcherUrl: '' };
  parties.catcherUrl = await startServer(parties, (req, res) => {
    parties.caught.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
    res.end('{}');
  });
  return parties;
}

export async function startServer(parties: Parties, handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  parties.servers.push(server);
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export function closeParties(parties: Parties): void {
  for (const s of parties.servers) {
    s.closeAllConnections();
    s.close();
  }
}

/** Answers as the mode says; `ok` answers `body`. */
export function misbehave(
  parties: Parties,
  mode: Mode,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: () => string,
): void {
  req.resume();
  switch (mode) {
    case 'redirect': {
      const status = [301, 302, 303, 307, 308][Math.floor(Math.random() * 5)]!;
      return void res.writeHead(status, { location: `${parties.catcherUrl}/stolen${req.url}` }).end();
    }
    case 'endless': {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let written = 0;
      const pump = () => {
        while (!res.destroyed && written < 512 * 1024 * 1024) {
          written += chunk.length;
          parties.mostWritten = Math.max(parties.mostWritten, written);
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      return void pump();
    }
    case 'drip': {
      res.writeHead(200);
      const t = setInterval(() => res.write(' '), 100);
      return void res.on('close', () => clearInterval(t));
    }
    case 'drop':
      return void req.socket.destroy();
    case 'silent':
      return;
    case 'hostile':
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end(HOSTILE_TEXT);
    case 'ok':
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(body());
  }
}

/** A delivery as the sandbox's control API records it, for the `deliveries` control mode. */
export interface RecordedDelivery {
  id: number;
  [field: string]: unknown;
}

/**
 * One tool run's own hostile parties: an endpoint and a sandbox control API, each answering as its mode
 * says, and a catcher where their redirects point. A test starts one for each run, so that runs that
 * wait out time-outs can run side by side (their waits overlap) without one run's mode or counts
 * reaching another's.
 */
export interface World {
  parties: Parties;
  endpointUrl: string;
  controlUrl: string;
  /** Requests each party saw. */
  seen: { endpoint: number; control: number };
  /** The headers of each request the endpoint saw. */
  received: http.IncomingHttpHeaders[];
  close: () => void;
}

export async function startWorld(options: {
  endpoint: Mode;
  control: Mode | 'deliveries';
  /** What the control API lists in the `deliveries` mode: once to a caller past the newest, then nothing new. */
  delivery: RecordedDelivery;
  /** The control API's answer in the `ok` mode. */
  controlBody: () => string;
  /** Served at /openapi.json whatever the endpoint's mode (the contract suite reads it first), not counted. */
  spec?: Buffer;
}): Promise<World> {
  const parties = await startParties();
  const seen = { endpoint: 0, control: 0 };
  const received: http.IncomingHttpHeaders[] = [];
  const endpointUrl = await startServer(parties, (req, res) => {
    if (options.spec && req.url === '/openapi.json')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(options.spec);
    seen.endpoint++;
    received.push(req.headers);
    misbehave(parties, options.endpoint, req, res, () => '{"ok":true}');
  });
  const controlUrl = await startServer(parties, (req, res) => {
    seen.control++;
    if (options.control === 'deliveries') {
      req.resume();
      // The newest delivery first (listen's start: none), then the one to forward, then nothing new.
      const url = new URL(req.url ?? '/', 'http://control');
      const after = Number(url.searchParams.get('after') ?? 0);
      const list = url.searchParams.has('latest') || after >= options.delivery.id ? [] : [options.delivery];
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ responseCode: 0, deliveries: list }));
    }
    misbehave(parties, options.control, req, res, options.controlBody);
  });
  return { parties, endpointUrl, controlUrl, seen, received, close: () => closeParties(parties) };
}

/** The lines of what a tool printed that break the rules: a raw control character or a card number. */
export function unsafeLines(lines: readonly string[]): { raw: string[]; cards: string[] } {
  const all = lines.flatMap((l) => l.split('\n'));
  return { raw: all.filter((l) => RAW.test(l)), cards: all.filter((l) => findCardNumber(l)) };
}

/** `contract --notifications` to a world's endpoint with 1 s time-outs, and its control API's record of effects when asked. */
export const notificationsAt = (w: World, effects = false): string[] => [
  '--notifications',
  `${w.endpointUrl}/hooks`,
  '--passphrase',
  'sandbox-passphrase',
  '--timeout-seconds',
  '1',
  ...(effects ? ['--effects', `${w.controlUrl}/effects`] : []),
];

/** `listen` forwarding to `endpointUrl` from the control API at `controlUrl`, once, with 1 s time-outs and no pause between polls. */
export const listenOnce = (endpointUrl: string, controlUrl: string): string[] => [
  '--forward-to',
  `${endpointUrl}/hooks`,
  '--base',
  controlUrl,
  '--sandbox-timeout-seconds',
  '1',
  '--timeout-seconds',
  '1',
  '--poll-seconds',
  '0',
  '--count',
  '1',
];

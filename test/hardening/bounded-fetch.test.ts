// The hardened HTTP client the package's tools talk through (runtime/bounded-fetch.ts), against a
// hostile server the test starts on loopback: it never follows a redirect, reads at most its cap, times
// out a silent or dripping answer, keeps a deadline, gives up after a few exchanges in a row without
// an answer (and starts counting again after one that has one), and says each in one line.
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedClient as clientOn, type ClientLimits, ExchangeFailed } from '../../runtime/bounded-fetch.ts';
import { fetchTransport, nodeTransport } from '../../runtime/http-transport.ts';

let server: http.Server;
let catcher: http.Server;
let base = '';
let caught = 0;
let received = 0;
let mostWritten = 0;

beforeAll(async () => {
  catcher = http.createServer((_req, res) => {
    caught++;
    res.end('stolen');
  });
  catcher.listen(0, '127.0.0.1');
  await new Promise((r) => catcher.once('listening', r));
  const catcherPort = (catcher.address() as AddressInfo).port;
  server = http.createServer((req, res) => {
    received++;
    const [, what, arg] = (req.url ?? '').split('/');
    req.resume();
    if (what === 'redirect')
      return void res.writeHead(Number(arg), { location: `http://127.0.0.1:${catcherPort}/x` }).end();
    if (what === 'ok') return void res.end('fine');
    if (what === 'echo') {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      return void req.on('end', () =>
        res
          .writeHead(201, 'Made', { 'content-type': 'application/json', 'x-two': ['a', 'b'] })
          .end(JSON.stringify({ verb: req.method, headers: req.headers, body: Buffer.concat(parts).toString() })),
      );
    }
    if (what === 'empty') return void res.writeHead(204).end();
    if (what === 'declared') return void res.writeHead(200, { 'content-length': String(10 ** 9) }).end();
    if (what === 'endless') {
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'x');
      let written = 0;
      const pump = () => {
        while (!res.destroyed && written < 256 * 1024 * 1024) {
          written += chunk.length;
          mostWritten = Math.max(mostWritten, written);
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      return pump();
    }
    if (what === 'drip') {
      res.writeHead(200);
      const t = setInterval(() => res.write('.'), 50);
      return void res.on('close', () => clearInterval(t));
    }
    if (what === 'drop') return void req.socket.destroy();
    // silent: never answers
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
  catcher.close();
});

const kindOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'answered';
  } catch (error) {
    expect(error).toBeInstanceOf(ExchangeFailed);
    expect((error as Error).message).not.toContain('\n');
    return (error as ExchangeFailed).kind;
  }
};

// Both ways onto the wire (runtime/http-transport.ts): node:http, the default, and fetch.
describe.each([
  ['node:http', nodeTransport],
  ['fetch', fetchTransport],
])('the bounded client through %s', (_, transport) => {
  const boundedClient = (limits: Partial<ClientLimits> = {}) => clientOn({ ...limits, transport });

  it('sends the verb, headers and body given, and answers the status, its words, headers and body', async () => {
    const client = boundedClient();
    const answer = await client.fetch(`${base}/echo`, {
      method: 'PUT',
      headers: { 'content-type': 'application/xml', 'x-api-key': 'key' },
      body: '<a>é</a>',
    });
    expect([answer.status, answer.statusText]).toEqual([201, 'Made']);
    expect(answer.headers.get('x-two')).toBe('a, b');
    const seen = await answer.json();
    expect(seen).toMatchObject({ verb: 'PUT', body: '<a>é</a>' });
    expect(seen.headers).toMatchObject({
      'content-type': 'application/xml',
      'x-api-key': 'key',
      'content-length': '9',
    });
    // What a firewall before a gateway may require: an agent and an accept header, the caller's own winning.
    expect(seen.headers).toMatchObject({ 'user-agent': 'node', accept: '*/*' });
    const own = await client.fetch(`${base}/echo`, {
      headers: { 'user-agent': 'suite/1', accept: 'application/json' },
    });
    expect((await own.json()).headers).toMatchObject({ 'user-agent': 'suite/1', accept: 'application/json' });
    // A Request, as a generated client passes it, the same.
    const request = new Request(`${base}/echo`, { method: 'POST', body: 'form=1' });
    expect(await (await client.fetch(request)).json()).toMatchObject({ verb: 'POST', body: 'form=1' });
    const head = await client.fetch(`${base}/ok`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
  });

  // The tools' own requests (a URL, a common method, a text or bytes body) are sent without a Request
  // (runtime/bounded-fetch.ts plainRequest); what a Request would do to them still happens.
  it('sends a plain request as a Request would: the text type added, bytes as they are, a method upper-cased', async () => {
    const client = boundedClient();
    const text = await (await client.fetch(`${base}/echo`, { method: 'POST', body: 'a=1' })).json();
    expect(text.headers['content-type']).toBe('text/plain;charset=UTF-8');
    const bytes = await (
      await client.fetch(`${base}/echo`, { method: 'POST', body: new TextEncoder().encode('é') })
    ).json();
    expect(bytes).toMatchObject({ verb: 'POST', body: 'é' });
    expect(bytes.headers['content-type']).toBeUndefined();
    expect(bytes.headers['content-length']).toBe('2');
    expect((await (await client.fetch(`${base}/echo`, { method: 'post', body: 'x' })).json()).verb).toBe('POST');
    expect((await (await client.fetch(new URL(`${base}/echo`))).json()).verb).toBe('GET');
  });

  it('sends what a Request would have sent: bytes as they were given, a head beyond ASCII as latin1, every option applied', async () => {
    const client = boundedClient();
    // The caller's buffer, filled again before the socket has taken it.
    for (const bytes of [new TextEncoder().encode('AAAA'), Buffer.from('AAAA')]) {
      const pending = client.fetch(`${base}/echo`, { method: 'POST', body: bytes });
      bytes.fill(66);
      expect((await (await pending).json()).body).toBe('AAAA');
    }
    // A header's é is one byte, whatever the body (node:http writes a head joined to a text body as UTF-8).
    const seen = await (
      await client.fetch(`${base}/echo`, { method: 'POST', headers: { 'x-name': 'café' }, body: 'hi' })
    ).json();
    expect(seen.headers['x-name']).toBe('café');
    // An option a plain request does not hold goes through a Request, and fetch applies it.
    const fresh = await (await client.fetch(`${base}/echo`, { cache: 'no-store' })).json();
    expect(fresh.headers['cache-control']).toBe(transport === fetchTransport ? 'no-cache' : undefined);
    // An option read as a Request reads it: a getter counts.
    const init = Object.defineProperty({}, 'redirect', { get: () => 'bogus' }) as RequestInit;
    await expect(client.fetch(`${base}/echo`, init)).rejects.toThrow(TypeError);
  });

  it('refuses what a Request refuses, sending nothing: credentials in the URL, a GET with a body', async () => {
    const client = boundedClient();
    const before = received;
    const withCredentials = base.replace('http://', 'http://user:secret@');
    await expect(client.fetch(`${withCredentials}/echo`)).rejects.toThrow(TypeError);
    await expect(client.fetch(`${base}/echo`, { method: 'GET', body: 'x' })).rejects.toThrow(TypeError);
    await expect(client.fetch('not a url')).rejects.toThrow(TypeError);
    await expect(client.fetch(`${base}/echo`, { redirect: 'bogus' as RequestRedirect })).rejects.toThrow(TypeError);
    await expect(client.fetch(`${base}/echo`, { signal: {} as AbortSignal })).rejects.toThrow(TypeError);
    expect(received).toBe(before);
    expect(client.gaveUp).toBeUndefined();
  });

  it('takes a status HTTP does not define for no answer, in one line', async () => {
    // Written by hand: node:http's server writes no status outside 100 to 999, nor a 1xx as the answer.
    const odd = net.createServer((socket) =>
      socket.once('data', (head: Buffer) => {
        const status = /^GET \/(\d+)/.exec(head.toString())![1];
        socket.end(`HTTP/1.1 ${status} Odd\r\ncontent-length: 3\r\nconnection: close\r\n\r\nodd`);
      }),
    );
    odd.listen(0, '127.0.0.1');
    await once(odd, 'listening');
    const at = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
    try {
      const client = boundedClient({ giveUpAfter: 100 });
      for (const status of [999, 600]) {
        const failure = await client.fetch(`${at}/${status}`).catch((e: unknown) => e);
        expect(failure).toBeInstanceOf(ExchangeFailed);
        expect((failure as Error).message).toBe(`${at} answered status ${status}, which HTTP does not define`);
      }
      expect((await client.fetch(`${at}/599`)).status).toBe(599);
    } finally {
      odd.close();
    }
  });

  it('times out a request whose body stalls as it is sent', async () => {
    const client = boundedClient({ timeoutMs: 300, giveUpAfter: 100 });
    const stalled = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new TextEncoder().encode('{"method":')),
    });
    const init = { method: 'POST', body: stalled, duplex: 'half' } as RequestInit;
    expect(await kindOf(client.fetch(`${base}/echo`, init))).toBe('timeout');
  });

  it("ends an exchange its caller aborts, with the caller's reason", async () => {
    const client = boundedClient({ giveUpAfter: 1 });
    const caller = new AbortController();
    const pending = client.fetch(`${base}/silent`, { signal: caller.signal });
    caller.abort(new Error('the user pressed Ctrl-C'));
    await expect(pending).rejects.toThrow('the user pressed Ctrl-C');
    expect(client.gaveUp).toBeUndefined();
  });

  it('answers a redirect as it is, never following it, whatever the verb and status', async () => {
    const client = boundedClient();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(301, 302, 303, 307, 308),
        fc.constantFrom('GET', 'POST', 'PUT'),
        async (s, verb) => {
          const answer = await client.fetch(`${base}/redirect/${s}`, {
            method: verb,
            headers: { authorization: 'Basic c2VjcmV0', 'x-api-key': 'secret' },
            ...(verb === 'GET' ? {} : { body: '{"hash":"signed"}' }),
          });
          expect(answer.status).toBe(s);
        },
      ),
      { seed: 3926, numRuns: 30 },
    );
    expect(caught).toBe(0);
  });

  it('reads at most its cap of an answer, however it is sent', async () => {
    const client = boundedClient({ maxBytes: 256 * 1024, giveUpAfter: 100 });
    expect(await kindOf(client.fetch(`${base}/endless`))).toBe('too-large');
    expect(await kindOf(client.fetch(`${base}/declared`))).toBe('too-large');
    // Written: the cap and what the sockets buffer, not the 256 MiB the server had to send.
    expect(mostWritten).toBeLessThan(32 * 1024 * 1024);
    expect(await (await client.fetch(`${base}/ok`)).text()).toBe('fine');
    expect((await client.fetch(`${base}/empty`)).status).toBe(204);
  });

  it('times out a silent or dripping server, and a dropped connection is no answer', async () => {
    const client = boundedClient({ timeoutMs: 300, giveUpAfter: 100 });
    expect(await kindOf(client.fetch(`${base}/silent`))).toBe('timeout');
    expect(await kindOf(client.fetch(`${base}/drip`))).toBe('timeout');
    expect(await kindOf(client.fetch(`${base}/drop`))).toBe('unreachable');
  });

  it('gives up after exchanges in a row without an answer; one answer starts the count again', async () => {
    const client = boundedClient({ timeoutMs: 200, giveUpAfter: 3 });
    await kindOf(client.fetch(`${base}/silent`));
    await kindOf(client.fetch(`${base}/drop`));
    await client.fetch(`${base}/ok`);
    await kindOf(client.fetch(`${base}/silent`));
    await kindOf(client.fetch(`${base}/drop`));
    expect(client.gaveUp).toBeUndefined();
    await kindOf(client.fetch(`${base}/silent`));
    expect(client.gaveUp).toMatch(/^gave up after 3 exchanges in a row without an answer/);
    expect(await kindOf(client.fetch(`${base}/ok`))).toBe('given-up');
  });

  it('keeps its deadline, whatever the time-out', async () => {
    const client = boundedClient({ timeoutMs: 60_000, deadline: Date.now() + 300 });
    expect(await kindOf(client.fetch(`${base}/drip`))).toBe('deadline');
    expect(await kindOf(client.fetch(`${base}/ok`))).toBe('given-up');
    expect(client.gaveUp).toMatch(/deadline/);
  });
});

// Finding: a web page could drive a developer's local sandbox. The default CORS policy trusted the
// opaque origin (`Origin: null`: any sandboxed iframe, data: URL or file a page makes sends it, not
// only the docs opened from disk), and the Host header was never checked, so a page whose name was
// rebound to 127.0.0.1 (DNS rebinding) spoke to the sandbox as its own origin, no CORS asked. Now, by
// default, the opaque origin is not trusted (loopback pages are) and a request must name the sandbox
// by a loopback name (localhost, *.localhost, 127.0.0.0/8, [::1]) or a name it is told
// (PGW_SANDBOX_ALLOWED_HOSTS); both open only by an explicit, documented setting (docs/DEPLOY.md).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type TestSandbox } from '../sandbox/support.ts';
import http from 'node:http';

let sb: TestSandbox;
let opened: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ control: true });
  opened = await startSandbox({
    control: true,
    env: { PGW_SANDBOX_ALLOWED_ORIGINS: 'null,loopback', PGW_SANDBOX_ALLOWED_HOSTS: 'sandbox.example.com' },
  });
});
afterAll(async () => {
  await sb?.close();
  await opened?.close();
});

/** A request with a Host header of our choosing (fetch does not let a caller set it). */
function ask(
  base: string,
  path: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method: 'GET', headers: { host, ...headers }, agent: false },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const PATHS = ['/openapi.json', '/docs', '/_sandbox/clock', '/_sandbox/deliveries', '/post'];

/** Names a page can make its browser send as the Host: anything but a loopback name. */
const foreignHost = fc.oneof(
  fc.domain().filter((d) => !/(^|\.)localhost$/i.test(d)),
  fc.constantFrom(
    'evil.example',
    '127.0.0.1.nip.io',
    'localhost.evil.test',
    'localhostx',
    '10.0.0.5',
    '[::2]',
    '[::ffff:7f00:1].evil',
    '0.0.0.0',
    '169.254.169.254',
  ),
);
const withPort = (host: fc.Arbitrary<string>) =>
  fc
    .tuple(host, fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }))
    .map(([h, p]) => (p ? `${h}:${p}` : h));
const loopbackHost = fc.oneof(
  fc.constantFrom('localhost', 'LOCALHOST', 'localhost.', '[::1]', 'docs.localhost', 'a.b.localhost'),
  fc
    .tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
    .map(([a, b, c]) => `127.${a}.${b}.${c}`),
);

describe('a web page cannot drive a local sandbox', () => {
  it('a request naming another host is refused -2 naming Host, on every path (DNS rebinding)', async () => {
    await fc.assert(
      fc.asyncProperty(withPort(foreignHost), fc.constantFrom(...PATHS), async (host, path) => {
        const answer = await ask(sb.base, path, host);
        expect(answer.status, `${host} ${path}`).toBe(403);
        expect(JSON.parse(answer.body)).toEqual({
          responseCode: '-2',
          responseMessage:
            "Header 'Host' is invalid: must name this sandbox: a loopback name (localhost, 127.0.0.1, [::1]) or one of PGW_SANDBOX_ALLOWED_HOSTS (docs/DEPLOY.md)",
        });
      }),
      { seed: 3922, numRuns: 300 },
    );
  });

  it('a request naming it by a loopback name is answered', async () => {
    await fc.assert(
      fc.asyncProperty(withPort(loopbackHost), async (host) => {
        expect((await ask(sb.base, '/openapi.json', host)).status, host).toBe(200);
      }),
      { seed: 3923, numRuns: 200 },
    );
  });

  it('a load balancer asks for its health by any name', async () => {
    expect((await ask(sb.base, '/_sandbox/health', '10.0.0.11:4010')).status).toBe(200);
  });

  it('the opaque origin is not trusted by default: its preflight refused, its answers not readable', async () => {
    const preflight = await ask(sb.base, '/post', '127.0.0.1', {
      origin: 'null',
      'access-control-request-method': 'POST',
    }).catch(() => undefined);
    // OPTIONS needs its own verb: sent by hand.
    const { port } = new URL(sb.base);
    const options = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/post',
          method: 'OPTIONS',
          headers: { origin: 'null', 'access-control-request-method': 'POST' },
          agent: false,
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(options).toBe(403);
    expect(preflight?.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('both open by an explicit setting: PGW_SANDBOX_ALLOWED_ORIGINS=null,loopback and PGW_SANDBOX_ALLOWED_HOSTS', async () => {
    const answer = await ask(opened.base, '/openapi.json', 'sandbox.example.com:443', { origin: 'null' });
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBe('null');
    expect((await ask(opened.base, '/openapi.json', 'localhost:4010')).status).toBe(200);
    expect((await ask(opened.base, '/openapi.json', 'evil.example')).status).toBe(403);
  });
});

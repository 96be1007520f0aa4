// The mock's front against hostile input (#39, "readers that disagree"): it reads a request with the
// stubs' one reader, so the same bytes get the same verdict from both (a byte-order mark before JSON,
// a stray content type, a trailing slash...); no request, authenticated or not, crashes it or gets a
// 5xx; a body above the stubs' limit is refused 413 in the caller's wire format while it is read; Prism
// that hangs or is gone is answered 503 with the mock's refusal, no stack; a client that half-closes
// after sending gets its whole answer. The fuzz's figures are printed and written to
// test-results/mock-fuzz.json for CI (.ci/run prints them).
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { operations } from '../../generated/operations.ts';
import { createFront, mockDocument } from '../../mock/front.ts';
import { startMock } from '../../mock/run.ts';
import { sharedPrism } from '../support/shared-servers.ts';
import { createGateway, findCardNumber, protocols, type GatewayRequest } from '../../server-stubs/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';

/** One raw exchange: any verb, any header, any bytes; the answer, or how the connection failed. */
function exchange(
  port: number,
  verb: string,
  url: string,
  headers: Record<string, string>,
  body: Uint8Array | undefined,
): Promise<{ status: number; type: string; text: string } | { failed: string }> {
  return new Promise((resolve) => {
    const request = http.request({ host: '127.0.0.1', port, method: verb, path: url, headers });
    const timer = setTimeout(() => {
      request.destroy();
      resolve({ failed: 'hang: no answer within 15 s' });
    }, 15_000);
    request.on('error', (error) => {
      clearTimeout(timer);
      resolve({ failed: error.message });
    });
    request.on('response', (response) => {
      const parts: Buffer[] = [];
      response.on('data', (c: Buffer) => parts.push(c));
      response.on('end', () => {
        clearTimeout(timer);
        resolve({
          status: response.statusCode!,
          type: String(response.headers['content-type'] ?? ''),
          text: Buffer.concat(parts).toString('utf8'),
        });
      });
    });
    request.end(body);
  });
}

const listen = async (server: net.Server) => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as net.AddressInfo).port;
};

/** The verdict of an answer: its status and, for a refusal, its code and words. */
const verdict = (status: number, type: string, text: string) => {
  const read = protocols.answeredIn(type)?.readAnswer(text);
  const answer = read && 'ok' in read ? read.ok : undefined;
  const code = Number(answer?.responseCode);
  return code < 0 ? { status, code, message: answer!.responseMessage } : { status, accepted: code >= 0 };
};

const card = operation('processCard');
const cardExample = requestExamples(card)[0]!.value;
const json = new TextEncoder().encode(String(buildRequest(card, { body: cardExample }).body));
const form = new TextEncoder().encode(String(buildRequest(card, { body: cardExample, wire: 'form' }).body));
const BOM = [0xef, 0xbb, 0xbf];

describe('the mock (Prism behind the front)', () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  let port: number;
  beforeAll(async () => {
    mock = await startMock({ port: 0, host: '127.0.0.1', prism: await sharedPrism() });
    port = Number(new URL(mock.url).port);
  });
  afterAll(() => mock?.close());

  it('gives the same bytes the verdict the stubs give them (property-based: prefixes, content types, paths, bodies)', async () => {
    const stubs = createGateway({ accounts, handlers: echoHandlers(), logger: false });
    const prefix = fc.constantFrom<number[]>(
      [],
      BOM,
      [...BOM, ...BOM],
      [0x20],
      [0x0a],
      [0xe2, 0x80, 0x8b],
      [0xff, 0xfe],
    );
    const base = fc.oneof(
      fc.constant(json),
      fc.constant(form),
      fc.constant(json.slice(0, 40)),
      fc.string({ maxLength: 60 }).map((s) => new TextEncoder().encode(s)),
      fc.uint8Array({ maxLength: 40 }),
    );
    const contentType = fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/x-www-form-urlencoded',
      'text/plain',
      undefined,
    );
    const url = fc.constantFrom('/post', '/post/', '/token', '/token/processCard', '/nowhere', '/npp/payid');
    const version = fc.constantFrom<string | undefined>('2.0', undefined, ' 2.0 ', '1.0');
    await fc.assert(
      fc.asyncProperty(prefix, base, contentType, url, version, async (pre, bytes, type, path, v) => {
        const body = new Uint8Array([...pre, ...bytes]);
        const headers: Record<string, string> = {};
        if (type !== undefined) headers['content-type'] = type;
        if (v !== undefined) headers['svc-api-version'] = v;
        const fromMock = await exchange(port, 'POST', path, headers, body);
        if ('failed' in fromMock) throw new Error(fromMock.failed);
        const request: GatewayRequest = { verb: 'POST', url: path, headers, body };
        const fromStubs = await stubs.handle(request);
        expect(verdict(fromMock.status, fromMock.type, fromMock.text)).toEqual(
          verdict(fromStubs.status, fromStubs.headers['content-type'] ?? '', String(fromStubs.body)),
        );
      }),
      { numRuns: 150, seed: 20261127 },
    );
  });

  it('reads a byte-order mark before a JSON body as the stubs do: the example is answered, not refused by Prism', async () => {
    const answer = await exchange(
      port,
      'POST',
      '/post',
      { 'content-type': 'application/json', 'svc-api-version': '2.0' },
      new Uint8Array([...BOM, ...json]),
    );
    expect(answer).toMatchObject({ status: 200 });
    expect(JSON.parse((answer as { text: string }).text).responseCode).toBe('0');
  });

  it('no request crashes it or gets a 5xx: odd verbs, paths, headers and bodies, unauthenticated (fuzz)', async () => {
    const figures = { seed: 20261127, requests: 0, fiveXX: 0, crashes: 0, hangs: 0, cardNumbersInAnswers: 0 };
    const verbs = fc.constantFrom('POST', 'GET', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'HEAD', 'PROPFIND');
    const paths = fc.oneof(
      fc.constantFrom(
        '/post',
        '/token/processCard',
        '/token/noSuchMethod',
        '/_scenario/expired/post',
        '/_scenario/%ZZ/post',
        '/_scenario/',
        '/npp/payid/%E0%A4%A',
        '/npp/payid/x?status=%zz',
        '/payout/transactions/../../etc/passwd',
        '/openapi.json',
        '/docs/',
        '//post',
        '/post?method=processCard',
      ),
      fc.webPath().map((p) => p || '/'),
    );
    const headerSets = fc.record(
      {
        'content-type': fc.constantFrom(
          'application/json',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/json; charset=latin1',
          '',
        ),
        'svc-api-version': fc.constantFrom('2.0', '', '2.0, 2.0'),
        'svc-sandbox-scenario': fc.constantFrom('expired', 'answerLost', 'x'.repeat(500), 'internalError', ','),
        accept: fc.constantFrom('text/xml', 'application/zip', '*/*', 'nothing'),
        'svc-merchantid': fc.constantFrom('5265f8eed6a19', 'nobody', ''),
        'svc-messagehash': fc.constantFrom('f'.repeat(64), 'zz'),
      },
      { requiredKeys: [] },
    );
    const bodies = fc.oneof(
      fc.constant(undefined),
      fc.constant(json),
      fc.constant(form),
      fc.constant(new TextEncoder().encode('{"method":"processCard","merchantUUID":{"$gt":""}}')),
      fc.constant(new TextEncoder().encode('[]')),
      fc.constant(new TextEncoder().encode('null')),
      fc.constant(new TextEncoder().encode('{"method":"processCard","method":"addCard"}')),
      fc.constant(new TextEncoder().encode(`{${Array.from({ length: 2000 }, (_, i) => `"f${i}":1`).join(',')}}`)),
      fc.constant(new TextEncoder().encode('method=processCard&method=addCard&%zz=1&=&a[b]=c')),
      fc.uint8Array({ maxLength: 200 }),
      fc.string({ unit: 'binary', maxLength: 200 }).map((s) => new TextEncoder().encode(s)),
    );
    await fc.assert(
      fc.asyncProperty(verbs, paths, headerSets, bodies, async (verb, path, headers, body) => {
        const sent = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<
          string,
          string
        >;
        // HEAD and GET carry no body a client would send; node:http sends one anyway: so do we.
        const answer = await exchange(port, verb, path, sent, body);
        figures.requests++;
        if ('failed' in answer) {
          if (answer.failed.startsWith('hang')) figures.hangs++;
          else figures.crashes++;
          throw new Error(`${verb} ${path}: ${answer.failed}`);
        }
        if (answer.status >= 500) figures.fiveXX++;
        // The spec and its docs page show the sandbox's test card in their examples: not an answer's.
        const served = /^\/(openapi\.(json|yaml)|docs\/?)(\?|$)/.test(path);
        if (!served && findCardNumber(answer.text)) figures.cardNumbersInAnswers++;
        expect(served || !findCardNumber(answer.text), answer.text.slice(0, 300)).toBe(true);
        expect(answer.status, `${verb} ${path} ${JSON.stringify(sent)}: ${answer.text.slice(0, 300)}`).toBeLessThan(
          500,
        );
        // No stack trace in an answer the front writes (the docs page is HTML of its own).
        if (!answer.type.startsWith('text/html'))
          expect(/^\s+at .+[:(]\d+/m.test(answer.text), answer.text.slice(0, 300)).toBe(false);
      }),
      { numRuns: 300, seed: 20261127 },
    );
    console.log(`mock front fuzz: ${JSON.stringify(figures)}`);
    mkdirSync('test-results', { recursive: true });
    writeFileSync('test-results/mock-fuzz.json', `${JSON.stringify(figures, null, 2)}\n`);
    // Still answering.
    const after = await exchange(
      port,
      'POST',
      '/post',
      { 'content-type': 'application/json', 'svc-api-version': '2.0' },
      json,
    );
    expect(after).toMatchObject({ status: 200 });
  });
});

describe('the front without a working Prism', () => {
  const servers: net.Server[] = [];
  afterAll(() => {
    for (const s of servers) s.close();
  });
  const front = async (target: { host: string; port: number }, prismTimeoutMs = 300) => {
    const server = createFront({ target, choosesExamples: true, prismTimeoutMs });
    servers.push(server);
    return listen(server);
  };

  it("answers 503, -4 and Retry-After when Prism hangs or is gone, in the caller's wire format, no stack", async () => {
    // Prism that takes the connection and never answers; then a port where nothing listens.
    const silent = net.createServer(() => {});
    servers.push(silent);
    const hanging = await listen(silent);
    const closed = net.createServer();
    const gone = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    for (const target of [hanging, gone]) {
      const port = await front({ host: '127.0.0.1', port: target });
      for (const wire of ['json', 'form'] as const) {
        const request = buildRequest(card, { body: cardExample, wire });
        const answer = await exchange(
          port,
          'POST',
          request.url,
          request.headers as Record<string, string>,
          new TextEncoder().encode(String(request.body)),
        );
        expect(answer).toMatchObject({ status: 503, type: protocols.byId(wire)!.answerType });
        const read = protocols.byId(wire)!.readAnswer((answer as { text: string }).text);
        expect(read).toEqual({
          ok: {
            responseCode: wire === 'json' ? '-4' : expect.anything(),
            responseMessage: 'The mock cannot serve its example now (Prism did not answer): retry after 1 s',
          },
        });
      }
    }
  });

  it("refuses a body above the stubs' limit 413 while reading it, in the caller's wire format (declared or chunked)", async () => {
    // A Prism that would answer anything: the body never reaches it.
    let asked = 0;
    const prism = http.createServer((_, res) => {
      asked++;
      res.end('{}');
    });
    servers.push(prism);
    const port = await front({ host: '127.0.0.1', port: await listen(prism) });
    const limit = operations.find((o) => o.operationId === 'processCard')!.maxBodyBytes;
    for (const [type, answerType] of [
      ['application/json', 'application/json'],
      ['application/x-www-form-urlencoded', 'application/xml'],
    ] as const) {
      const big = new Uint8Array(limit * 2).fill(0x61);
      for (const declared of [true, false]) {
        const headers: Record<string, string> = { 'content-type': type, 'svc-api-version': '2.0' };
        if (!declared) headers['transfer-encoding'] = 'chunked';
        const answer = await exchange(port, 'POST', '/post', headers, big);
        expect(answer, `${type} ${declared ? 'declared' : 'chunked'}`).toMatchObject({ status: 413 });
        expect((answer as { type: string }).type).toContain(answerType);
        expect((answer as { text: string }).text).toContain(`Request body exceeds ${limit} bytes`);
      }
    }
    expect(asked).toBe(0);
  });

  it('in proxy mode, waits a bounded time for the head of an answer, not for a long body streamed after it', async () => {
    // An upstream (Prism's proxy) that answers its head at once and its body over 1.5 s, and one that never
    // answers. The deadline (1 s) leaves a busy machine time to pass the head on, and the body goes on
    // after it.
    const slow = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/csv' });
      let sent = 0;
      const tick = setInterval(() => {
        res.write(`row ${sent}\n`);
        if (++sent === 6) {
          clearInterval(tick);
          res.end();
        }
      }, 250);
    });
    const silent = net.createServer(() => {});
    servers.push(slow, silent);
    const proxy = async (port: number) => {
      const server = createFront({ target: { host: '127.0.0.1', port }, choosesExamples: false, prismTimeoutMs: 1000 });
      servers.push(server);
      return listen(server);
    };
    const streamed = await exchange(await proxy(await listen(slow)), 'POST', '/post', {}, json);
    expect(streamed).toMatchObject({ status: 200, text: 'row 0\nrow 1\nrow 2\nrow 3\nrow 4\nrow 5\n' });
    const none = await exchange(await proxy(await listen(silent)), 'POST', '/post', {}, json);
    expect(none).toMatchObject({ status: 502 });
    expect(JSON.parse((none as { text: string }).text)).toEqual({
      responseCode: '-4',
      responseMessage: 'Mock unavailable: no answer within 1000 ms',
    });
  });

  it('answers a client that half-closes after sending, whole', async () => {
    // A Prism stand-in that answers processCard's example after a moment.
    const example = mockDocument().components.examples as Record<string, { value: unknown }>;
    const prism = http.createServer((req, res) => {
      const name = String(req.headers.prefer).replace('example=', '');
      req.resume();
      setTimeout(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(example[name]!.value)),
        50,
      );
    });
    servers.push(prism);
    const port = await front({ host: '127.0.0.1', port: await listen(prism) }, 5_000);
    const text = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(
          `POST /post HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nSVC-API-VERSION: 2.0\r\nContent-Length: ${json.length}\r\n\r\n`,
        );
        socket.write(json);
        socket.end();
      });
      const chunks: Buffer[] = [];
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('error', () => {});
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    const body = text.slice(text.indexOf('\r\n\r\n') + 4);
    expect(JSON.parse(body)).toMatchObject({ responseCode: '0', transactionAmount: '10.00' });
  });
});

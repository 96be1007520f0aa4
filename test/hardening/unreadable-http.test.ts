// Requests Node's HTTP parser refuses before any handler runs (a NUL or another control character in
// a header, a header name that is no name, conflicting body lengths, headers past the size the server
// reads) were answered with a bare "400 Bad Request" and no body: no responseCode, nothing named.
// They now get the gateway's refusal, in the wire format the request's Content-Type names, and the
// connection is closed. Served by createNodeServer: the sandbox and the mock front answer alike.
import { once } from 'node:events';
import type http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, createNodeServer } from '../../server-stubs/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';

const gateway = createGateway({ handlers: echoHandlers(), accounts });
let server: http.Server;
let port: number;
beforeAll(async () => {
  server = createNodeServer(gateway);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

interface Raw {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends bytes as they are and reads the answer up to the connection's end. */
async function raw(request: string): Promise<Raw> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
  socket.on('error', () => {});
  socket.write(request);
  await once(socket, 'close');
  const [head = '', body = ''] = received.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

const JSON_HEAD =
  'POST /post HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nSVC-API-VERSION: 2.0\r\n';
const FORM_HEAD =
  'POST /post HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nSVC-API-VERSION: 2.0\r\n';
const BODY = '{"method":"processCard"}';
const withHeader = (head: string, header: string) =>
  `${head}${header}\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`;

const json = (answer: Raw) => {
  expect(answer.headers['content-type']).toBe('application/json');
  expect(answer.headers.connection).toBe('close');
  return JSON.parse(answer.body);
};

describe('a request the HTTP parser refuses gets the gateway refusal, not a bare 400', () => {
  it('names a header that holds a NUL, in the words the core uses for one that reaches it', async () => {
    const answer = await raw(withHeader(JSON_HEAD, 'X-Note: a\0b'));
    expect(answer.status).toBe(400);
    expect(json(answer)).toEqual({
      responseCode: '-2',
      responseMessage: "Header 'X-Note' is invalid: holds a NUL character",
    });
  });

  it('answers in XML when the request was form-encoded', async () => {
    const answer = await raw(withHeader(FORM_HEAD, 'X-Note: a\0b'));
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/xml');
    expect(answer.body).toContain('<responseCode>-2</responseCode>');
    expect(answer.body).toContain("Header 'X-Note' is invalid: holds a NUL character");
  });

  it('names a header that holds another control character, and which one', async () => {
    const answer = await raw(withHeader(JSON_HEAD, 'X-Note: a\x01b'));
    expect(answer.status).toBe(400);
    expect(json(answer)).toEqual({
      responseCode: '-2',
      responseMessage: "Header 'X-Note' is invalid: holds a control character (U+0001)",
    });
  });

  it('says so for a header name that is no name, without repeating it', async () => {
    const answer = await raw(withHeader(JSON_HEAD, 'X Note\x7f: 1'));
    expect(answer.status).toBe(400);
    expect(json(answer)).toEqual({
      responseCode: '-2',
      responseMessage: "The request is not readable HTTP/1.1: a header's name holds a character no name may hold",
    });
  });

  it('refuses a body sent with both Content-Length and Transfer-Encoding', async () => {
    const answer = await raw(
      `${JSON_HEAD}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    );
    expect(answer.status).toBe(400);
    expect(json(answer)).toEqual({
      responseCode: '-2',
      responseMessage: 'The request is not readable HTTP/1.1: it sends both Content-Length and Transfer-Encoding',
    });
  });

  it('says what is wrong with a request line or a body length, in words', async () => {
    const cases: [string, string][] = [
      [
        'GET /a b HTTP/1.1\r\nContent-Type: application/json\r\n\r\n',
        'its request line is not a method, a path and the HTTP version',
      ],
      [
        'P@ST /post HTTP/1.1\r\nContent-Type: application/json\r\n\r\n',
        'its request line does not start with a method',
      ],
      [`${JSON_HEAD}Content-Length: 5x\r\n\r\nhello`, 'its Content-Length is not one number'],
      [`${JSON_HEAD}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello`, 'it sends Content-Length more than once'],
      [`${JSON_HEAD}Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n`, 'its chunked body is malformed'],
      [`${JSON_HEAD}XNote\r\n\r\n`, 'a header line holds no colon'],
    ];
    for (const [request, why] of cases)
      expect(json(await raw(request)), request).toEqual({
        responseCode: '-2',
        responseMessage: `The request is not readable HTTP/1.1: ${why}`,
      });
  });

  it('answers headers larger than the server reads with 431', async () => {
    const answer = await raw(withHeader(JSON_HEAD, `X-Note: ${'a'.repeat(20_000)}`));
    expect(answer.status).toBe(431);
    expect(json(answer)).toEqual({
      responseCode: '-2',
      responseMessage: `The request is not readable HTTP/1.1: its headers are larger than 16384 bytes`,
    });
  });

  it('never repeats a card number, in a header name or its value', async () => {
    for (const header of ['X-Note: 4111111111111111\x01', '4111111111111111: a\0']) {
      const answer = await raw(withHeader(JSON_HEAD, header));
      expect(answer.status).toBe(400);
      expect(answer.body).not.toContain('4111111111111111');
      expect(json(answer).responseCode).toBe('-2');
    }
  });

  it('answers a HEAD with the head alone, as HTTP has it', async () => {
    const answer = await raw(
      'HEAD /post HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Note: a\x01\r\n\r\n',
    );
    expect(answer.status).toBe(400);
    expect(Number(answer.headers['content-length'])).toBeGreaterThan(0);
    expect(answer.body).toBe('');
  });

  it('answers a request whose headers do not arrive in time with 408', async () => {
    const slow = createNodeServer(gateway, { headersTimeout: 300, requestTimeout: 300 });
    slow.listen(0, '127.0.0.1');
    await once(slow, 'listening');
    try {
      const socket = net.connect((slow.address() as AddressInfo).port, '127.0.0.1');
      await once(socket, 'connect');
      let received = '';
      socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
      socket.write('POST /post HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n');
      await once(socket, 'close');
      expect(received).toMatch(/^HTTP\/1\.1 408 /);
      expect(JSON.parse(received.split('\r\n\r\n')[1]!)).toEqual({
        responseCode: '-2',
        responseMessage:
          'The request is not readable HTTP/1.1: it did not arrive within the time the server gives a request',
      });
    } finally {
      await new Promise((resolve) => slow.close(resolve));
    }
  });

  it('still answers the next well-formed request on another connection', async () => {
    await raw(withHeader(JSON_HEAD, 'X-Note: a\0b'));
    const answer = await raw(`GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(answer.status).toBe(200);
  });
});

// The floor over HTTP: node:http reading the body as this package's adapter does, then only the
// contract's checks for the request (bench/floor.ts). Its route is one Map lookup by verb, URL and
// `method`, which stands for routing at no cost. No implementation of these checks with these
// primitives can beat it here, so it bounds what this package's server can reach.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { floorAnswer, mix, type MixEntry } from '../floor.ts';

const keyOf = (verb: string | undefined, url: string | undefined, method: unknown) =>
  `${verb} ${url} ${typeof method === 'string' ? method : ''}`;
const byKey = new Map<string, MixEntry>(mix.map((m) => [keyOf(m.verb, m.url, m.text && JSON.parse(m.text).method), m]));

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {};
    const entry = byKey.get(keyOf(req.method, req.url, body.method));
    if (!entry) {
      res.writeHead(404).end();
      return;
    }
    const text = floorAnswer(entry.op, entry.result, body);
    res.writeHead(entry.op.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () =>
  console.log(`ready ${(server.address() as AddressInfo).port}`),
);

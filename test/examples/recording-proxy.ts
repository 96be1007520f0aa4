// A proxy that passes every request to a gateway and keeps both sides as they were on the wire: what
// an example client really sent (path, headers, raw body) and what it got back (status, type, bytes),
// so a test checks the client's requests and the gateway's answers, not the client's account of them.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Exchange {
  path: string;
  contentType: string;
  accept: string | undefined;
  /** The request body exactly as sent. */
  body: string;
  status: number;
  answerType: string;
  answer: Buffer;
}

export interface RecordingProxy {
  url: string;
  exchanges: Exchange[];
  close(): Promise<void>;
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const exchanges: Exchange[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) headers[name] = value;
    const response = await fetch(target + req.url, { method: req.method!, headers, body });
    const answer = Buffer.from(await response.arrayBuffer());
    const answerType = response.headers.get('content-type') ?? '';
    exchanges.push({
      path: req.url!,
      contentType: req.headers['content-type'] ?? '',
      accept: req.headers.accept,
      body: body.toString('utf8'),
      status: response.status,
      answerType,
      answer,
    });
    res.writeHead(response.status, { 'content-type': answerType });
    res.end(answer);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

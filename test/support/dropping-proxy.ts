// A proxy in front of a gateway that loses answers on purpose: for each request a plan says whether to
// pass it, to forward it and drop the answer once the gateway has committed it (dropAfter), or to drop
// the connection before the gateway sees it (dropBefore). What a flaky network does to a client.
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

export type Fate = 'pass' | 'dropAfter' | 'dropBefore';

export interface Seen {
  /** The body's method field, or the path. */
  name: string;
  body: Record<string, unknown>;
  fate: Fate;
  /** What the gateway answered, when it was asked. */
  answered?: string;
}

export interface DroppingProxy {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

export async function startDroppingProxy(
  target: string,
  plan: (name: string, body: Record<string, unknown>, seen: Seen[]) => Fate,
): Promise<DroppingProxy> {
  const seen: Seen[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> = {};
    try {
      body = text ? JSON.parse(text) : {};
    } catch {}
    const name = typeof body.method === 'string' ? body.method : (req.url ?? '/');
    const entry: Seen = { name, body, fate: plan(name, body, seen) };
    seen.push(entry);
    if (entry.fate === 'dropBefore') return void req.socket.destroy();
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length' && k !== 'connection'),
    ) as Record<string, string>;
    const answer = await fetch(`${target}${req.url}`, {
      method: req.method!,
      headers,
      ...(text ? { body: text } : {}),
    });
    entry.answered = await answer.text();
    if (entry.fate === 'dropAfter') return void req.socket.destroy();
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(entry.answered);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

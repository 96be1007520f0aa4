// The node:http adapter: the default server. It reads at most what the path's operations accept,
// hands the request to the gateway core and writes its response.
import http from 'node:http';
import type { Gateway } from '../core/gateway.ts';
import { refusalResponse, refuse } from '../core/refusals.ts';
import type { GatewayResponse } from '../core/types.ts';

function send(res: http.ServerResponse, response: GatewayResponse): void {
  // Encode once: the length and the bytes written come from the same buffer.
  const body = typeof response.body === 'string' ? Buffer.from(response.body, 'utf8') : response.body;
  res.writeHead(response.status, { ...response.headers, 'content-length': String(body.byteLength) });
  res.end(body);
}

export function createNodeHandler(gateway: Gateway): http.RequestListener {
  return (req, res) => {
    const url = req.url ?? '/';
    const limit = gateway.readLimit(url.split('?')[0]!);
    const declared = Number(req.headers['content-length'] ?? 0);
    const tooLarge = () => {
      send(res, refusalResponse(undefined, refuse(-2, `Request body exceeds ${limit} bytes`, 413)));
      req.destroy();
    };
    if (declared > limit) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > limit) return;
      const headers = req.headers as Record<string, string | undefined>;
      gateway
        .handle({ verb: req.method ?? 'GET', url, headers, body: chunks.length ? Buffer.concat(chunks) : undefined })
        .then((response) => send(res, response))
        .catch(() => send(res, refusalResponse(undefined, refuse(-4, 'Internal gateway error', 500))));
    });
  };
}

export function createNodeServer(gateway: Gateway): http.Server {
  const server = http.createServer(createNodeHandler(gateway));
  // Keep-alive connections beyond load-balancer time-outs; headers must arrive within ten seconds.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 10_000;
  return server;
}

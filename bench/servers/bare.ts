// The ceiling: node:http reading the body and answering a constant, no routing, no validation.
// The constant is a typical answer of the mix (processCard's approved result), so that the load tool
// reads as many bytes per answer from the ceiling as from the servers it is compared with.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { operations } from '../../generated/operations.ts';
import { firstResultExample } from '../../contract/index.ts';

const body = JSON.stringify(firstResultExample(operations.find((o) => o.operationId === 'processCard')!));
// BARE_BUSY_US: CPU work added per request (a spin), to calibrate what a cost per request does here.
const busyMs = Number(process.env.BARE_BUSY_US ?? 0) / 1000;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (busyMs) for (const until = performance.now() + busyMs; performance.now() < until; );
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () =>
  console.log(`ready ${(server.address() as AddressInfo).port}`),
);

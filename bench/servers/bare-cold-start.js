// The floor of a cold start on the machine at hand: Node starting, node:http listening, and one
// answer, with no package loaded. `npm run bench` launches it as many times as the package's server
// (bench/servers/cold-start.js), the two taking turns, and prints the stubs' median minus this one's:
// what the package adds to a start, the figure that travels between machines where the start's own
// wall time does not. Plain JavaScript, as cold-start.js, so that neither pays for type stripping.
import { createRequire } from 'node:module';

// node:http by require, as the package's server takes it (runtime/node-http.ts): an ES import of it
// loads undici as well, a cost no server has to pay, which would raise the floor.
const http = createRequire(import.meta.url)('node:http');

// The bytes of the answer cold-start.js's handler gives the bench's first request (getSurcharge). The
// bench reads only the status; no media type is named: this server implements nothing of the API.
const body = JSON.stringify({
  responseCode: '0',
  responseMessage: 'Operation successful',
  transactionAmount: '10.00',
  surchargeAmount: '0.00',
  totalAmount: '10.00',
});
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => console.log(`ready ${server.address().port}`));
process.on('SIGTERM', () => process.exit(0));

import http from 'node:http';
import { NotificationDispatcher, type Notification } from '../notifications/index.ts';
import spec from '../generated/openapi.json' with { type: 'json' };

// What the app has applied, oldest first: served at /effects for `contract --notifications --effects`
// (a test-only route of a test-only app, on the loopback; a production receiver keeps it to itself).
const applied: Notification[] = [];

// The merchant's passphrase keys the signatures; repeats (gateway retries, resends) are handled once,
// and a notification older than one already handled about the same payout (out of order) not at all.
const hooks = new NotificationDispatcher({
  passphrase: process.env.PGW_SANDBOX_PASSPHRASE ?? spec.info['x-sandbox'].passphrase,
  // The hashSalt sent with processDDebitAuth signs its directDebitOutcome (payment-gateway trigger sends 'trigger').
  hashSalt: 'trigger',
})
  .on('payoutReturned', (n) =>
    console.log(
      `payout returned: ${n.result.transaction.reference}, ${n.result.transaction.amount} to ${n.result.payee.name}`,
    ),
  )
  .on('payoutTransaction', (n) => console.log(`payout ${n.payoutId}: ${n.result.payouts.at(-1)?.status}`));
for (const event of ['merchantCreated', 'directDebitOutcome', 'payoutTransaction', 'batchNotify'] as const)
  hooks.on(event, (n) => void applied.push(n));

const server = http.createServer(async (req, res) => {
  if (req.method === 'GET' && req.url === '/effects')
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(applied));
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  // Verify the raw body, before any JSON parser re-serialises it.
  const outcome = await hooks.handle(Buffer.concat(chunks), req.headers as Record<string, string>);
  if (outcome.status === 'refused') console.log(`refused: ${outcome.error.message}`);
  // A refusal names its reason, so that the sender (listen, contract --notifications) can show it;
  // a repeat or an out-of-order one is acknowledged (2xx), or the gateway sends it again and again.
  res
    .writeHead(outcome.status === 'refused' ? 400 : 200)
    .end(outcome.status === 'refused' ? `refused: ${outcome.error.message}` : outcome.status);
});
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () =>
  console.log(`hooks on http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`),
);

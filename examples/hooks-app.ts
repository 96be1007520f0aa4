import http from 'node:http';
import { NotificationDispatcher } from '../notifications/index.ts';
import spec from '../generated/openapi.json' with { type: 'json' };

// The merchant's passphrase keys the signatures; repeats (gateway retries, resends) are handled once.
const hooks = new NotificationDispatcher({
  passphrase: process.env.PGW_SANDBOX_PASSPHRASE ?? spec.info['x-sandbox'].passphrase,
  toleranceSeconds: 300,
})
  .on('payoutReturned', (n) =>
    console.log(
      `payout returned: ${n.result.transaction.reference}, ${n.result.transaction.amount} to ${n.result.payee.name}`,
    ),
  )
  .on('payoutTransaction', (n) => console.log(`payout ${n.payoutId}: ${n.result.payouts.at(-1)?.status}`));

const server = http.createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  // Verify the raw body, before any JSON parser re-serialises it.
  const outcome = await hooks.handle(Buffer.concat(chunks), req.headers as Record<string, string>);
  if (outcome.status === 'refused') console.log(`refused: ${outcome.error.message}`);
  // A refusal names its reason, so that the sender (listen, contract --notifications) can show it.
  res
    .writeHead(outcome.status === 'refused' ? 400 : 200)
    .end(outcome.status === 'refused' ? `refused: ${outcome.error.message}` : outcome.status);
});
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () =>
  console.log(`hooks on http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`),
);

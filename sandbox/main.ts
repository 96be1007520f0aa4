#!/usr/bin/env node
// npm start: the sandbox on http://localhost:4010 (PORT), on ./data/sandbox.db (PGW_DB; :memory:).
import { controlAllowed } from './control.ts';
import { createSandbox } from './index.ts';

const port = Number(process.env.PORT ?? 4010);
const host = process.env.HOST ?? '127.0.0.1';
// npm start is a sandbox: the control API is on unless NODE_ENV=production or PGW_SANDBOX_CONTROL=off.
const sandbox = createSandbox({ control: true, logger: { warn: (m, f) => console.warn(m, f ?? ''), error: (m, f) => console.error(m, f ?? '') } });
sandbox.notifier.start();
const server = sandbox.server();
server.listen(port, host, () => {
  const base = `http://${host === '0.0.0.0' ? 'localhost' : host}:${port}`;
  const s = sandbox.seed;
  console.log(`Payment gateway sandbox on ${base} (store: ${process.env.PGW_DB ?? './data/sandbox.db'}, schema v${sandbox.store.schemaVersion})
  docs      ${base}/docs
  spec      ${base}/openapi.json  ${base}/openapi.yaml
  merchant  merchantUUID ${s.merchantUUID}  apiKey ${s.apiKey}  passphrase ${s.passphrase}
  partner   partnerUUID ${s.partnerUUID}  apiKey ${s.apiKey}  passphrase ${s.passphrase}
  test card 4564710000000004, expiry 02/29, CSC 847 (approved); see the README for the others
  control   ${sandbox.control ? `${base}/_sandbox (${base}/_sandbox/openapi.yaml; HTTP Basic merchantUUID:apiKey)` : `off (${controlAllowed(true, process.env).why})`}`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => server.close(() => (sandbox.close(), process.exit(0))));
}

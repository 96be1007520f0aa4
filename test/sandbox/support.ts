// A sandbox on an in-memory store behind a real HTTP server, a typed client for it, and a record of
// the notifications it posts.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createGatewayClient, type GatewayClient } from '../../generated/client.ts';
import { createSandbox, type RunningSandbox, type SandboxOptions } from '../../sandbox/index.ts';

export interface Posted {
  url: string;
  headers: Record<string, string>;
  body: any;
}

export interface TestSandbox {
  sandbox: RunningSandbox;
  client: GatewayClient;
  base: string;
  posted: Posted[];
  close(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<TestSandbox> {
  const posted: Posted[] = [];
  const sandbox = createSandbox({
    dbPath: ':memory:',
    env: { PGW_SANDBOX_PARTNER_NOTIFY_URL: 'https://partner.test/notify' },
    fetch: (async (url: string, init: RequestInit) => {
      posted.push({ url, headers: init.headers as Record<string, string>, body: JSON.parse(String(init.body)) });
      return new Response(null, { status: 204 });
    }) as typeof fetch,
    ...options,
  });
  const server = sandbox.server();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const s = sandbox.seed;
  const client = createGatewayClient({ baseUrl: base, merchantUUID: s.merchantUUID, apiKey: s.apiKey, passphrase: s.passphrase, partner: { partnerUUID: s.partnerUUID, apiKey: s.apiKey, passphrase: s.passphrase } });
  return {
    sandbox,
    client,
    base,
    posted,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      sandbox.close();
    },
  };
}

/** Row counts of every table: a refusal must leave them all as they were. */
export function counts(sandbox: RunningSandbox): Record<string, number> {
  const tables = sandbox.store.all("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  return Object.fromEntries(tables.map((t) => [t.name, Number(sandbox.store.get(`SELECT count(*) AS n FROM ${t.name}`)!.n)]));
}

export const card = {
  visa: { paymentCardNumber: '4564710000000004', paymentCardExpiry: '0229', paymentCardName: 'Jane Citizen', paymentCardCSC: '847' },
  lowFunds: { paymentCardNumber: '4564710000000020', paymentCardExpiry: '0520', paymentCardName: 'Jane Citizen' },
};

export const customer = { customerName: 'Jane Citizen', customerCountry: 'AU', customerState: 'QLD', customerCity: 'Brisbane', customerAddress: '1 Test St', customerPostCode: '4000' } as const;

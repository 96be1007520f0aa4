// Two `npm start`s on the same new SQLite database and the same port (a supervisor that started two,
// a user who pressed enter twice): both pass the port check, the first writes the key file, the
// second reads it and wins the port. The first start is refused (port in use) and must not take
// back the key file the second is storing cards under: on the second's next start its cards would
// have no key, and be lost for good. The race is made certain here: the second instance starts (and
// takes the port) in the moment between the first's port check and its listen.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { afterAll, expect, it, vi } from 'vitest';
import type { Server } from 'node:http';
import { createSandbox } from '../../sandbox/index.ts';
import { checkOpenedStore, storePlace } from '../../sandbox/open-store.ts';
import { doc } from '../support/contract.ts';

/** Runs before the listen of the start's own server (the second call of listen: the first is the port check). */
const race: { beforeListen?: () => Promise<void> } = {};
vi.mock('../../cli-kit/index.ts', async (original) => {
  const real = await original<typeof import('../../cli-kit/index.ts')>();
  let calls = 0;
  return {
    ...real,
    listen: async (server: Server, port: number, host: string, option: string) => {
      calls += 1;
      if (calls === 2) await race.beforeListen?.();
      return real.listen(server, port, host, option);
    },
  };
});

const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-start-race-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

it('a start that loses its port to another instance on the same new database leaves that instance its key file', async () => {
  const file = path.join(dir, 'data', 'new.db');
  const port = await freePort();
  const saved = { ...process.env };
  for (const name of Object.keys(process.env)) if (/^(PORT|HOST|PGW_)/.test(name)) delete process.env[name];
  const { main } = await import('../../sandbox/main.ts');
  // The other instance: started on the same new database (it reads the key file the first wrote), it takes the port.
  let other: Awaited<ReturnType<typeof createSandbox>> | undefined;
  let otherServer: Server | undefined;
  race.beforeListen = async () => {
    other = await createSandbox({ dbPath: file, env: {} });
    otherServer = other.server();
    otherServer.listen(port, '127.0.0.1');
    await once(otherServer, 'listening');
  };
  try {
    await expect(main('payment-gateway-sandbox', ['--db', file, '--port', String(port), '--quiet'])).rejects.toThrow(
      `port ${port} is in use`,
    );
  } finally {
    process.env = saved;
  }
  // The other instance stores a card under the key it read, and stops.
  expect(other).toBeDefined();
  const running = other!;
  const answer = await running.gateway.handle({
    verb: 'POST',
    url: '/token',
    headers: { 'content-type': 'application/json', 'svc-api-version': '2.0' },
    body: JSON.stringify(doc.components.examples.addCard.value),
  });
  expect(JSON.parse(answer.body as string).responseCode).toBe('0');
  await new Promise((resolve) => otherServer!.close(resolve));
  await running.close();

  // Its key file is still there, and its next start (the checks npm start makes) opens the card.
  expect(existsSync(`${file}.key`)).toBe(true);
  const place = storePlace(file);
  const next = await createSandbox({ dbPath: file, env: {} });
  try {
    await checkOpenedStore(place, {}, next.store, next.vault, async () => {});
    const card = await next.store.get<{ pan_encrypted: string }>('SELECT pan_encrypted FROM cards LIMIT 1');
    expect(next.vault.decrypt(card!.pan_encrypted)).toMatch(/^\d{13,19}$/);
  } finally {
    await next.close();
  }
});

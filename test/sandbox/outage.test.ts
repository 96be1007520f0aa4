// Finding: a database outage was answered with thousands of HTTP 500s per second, and a load balancer
// had no health endpoint to take the instance out. While the store cannot be reached the sandbox
// answers 503 with Retry-After and the gateway's -4, at once, without a query or a pool connection
// waiting; it comes back by itself; GET /_sandbox/health says whether it can serve, without
// credentials and without data. The database here sits behind a TCP proxy on loopback that the test
// cuts and restores (PostgreSQL: PGW_TEST_DATABASE_URL); the breaker itself is checked on its own.
import { once } from 'node:events';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRequest, operation } from '../../contract/index.ts';
import { protocols } from '../../generated/protocols.ts';
import { operations } from '../../generated/operations.ts';
import { createSandbox, HEALTH_PATH, type RunningSandbox } from '../../sandbox/index.ts';
import { isPoolWait, isUnavailable, isUnreachable, StoreHealth } from '../../sandbox/store-health.ts';
import { PostgresStore } from '../../sandbox/store-postgres.ts';
import { until } from '../support/until.ts';
import { freshDatabase, PG_URL, SKIP_PG } from './support.ts';

describe('the breaker', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

  it('opens on an unreachable store only, lets one try through when its wait is over, closes on success', () => {
    const h = new StoreHealth();
    h.failed(Object.assign(new Error('duplicate key'), { code: '23505' }), 0);
    expect(h.retryAfter(0)).toBeUndefined();
    h.failed(refused, 0);
    expect(h.retryAfter(10)).toBe(1);
    expect(h.retryAfter(1000)).toBeUndefined(); // the one try
    expect(h.retryAfter(1001)).toBeGreaterThanOrEqual(1); // the others wait for it
    h.failed(refused, 1002); // it failed: a longer wait
    expect(h.retryAfter(2500)).toBe(1);
    expect(h.retryAfter(3002)).toBeUndefined();
    h.succeeded();
    expect(h.retryAfter(3003)).toBeUndefined();
    expect(h.down).toBe(false);
  });

  it('knows the errors that say the database is away', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', '08006', '57P01', '53300'])
      expect(isUnreachable({ code }), code).toBe(true);
    expect(isUnreachable(new Error('timeout expired'))).toBe(true);
    expect(isUnreachable(new Error('Connection terminated due to connection timeout'))).toBe(true);
    // pg-pool's words for a request that waited for a connection while every one was lent out: the
    // database answers, it is busy (finding, issue 44: under load this opened the breaker).
    expect(isUnreachable(new Error('timeout exceeded when trying to connect'))).toBe(false);
    for (const code of ['23505', '40001', '42P01', undefined])
      expect(isUnreachable({ code }), String(code)).toBe(false);
  });

  it('answers a wait for a busy pool that ran out as unavailable, without opening the breaker', () => {
    // Finding: as many stalled downloads as the pool has connections left every other request waiting
    // 30 s, then answered HTTP 500 -4 "Internal gateway error": the store could not serve it, and the
    // caller should be told to retry, as an outage tells it.
    const poolWait = new Error('timeout exceeded when trying to connect');
    expect(isPoolWait(poolWait)).toBe(true);
    expect(isUnavailable(poolWait)).toBe(true);
    expect(isUnavailable({ code: 'ECONNREFUSED' })).toBe(true);
    for (const error of [{ code: '23505' }, new Error('relation "x" does not exist'), undefined])
      expect(isUnavailable(error)).toBe(false);
    const h = new StoreHealth();
    const seen = { unavailable: false };
    const other = { unavailable: false };
    h.within(seen, () => h.failed(poolWait, 0));
    h.within(other, () => h.failed({ code: '23505' }, 0));
    expect(seen.unavailable).toBe(true);
    expect(other.unavailable).toBe(false);
    expect(h.down).toBe(false);
    expect(h.retryAfter(1)).toBeUndefined();
    expect(h.waitSeconds(1)).toBe(1);
  });
});

describe.skipIf(!PG_URL)(`a busy pool${PG_URL ? '' : ` (${SKIP_PG})`}`, () => {
  // Finding (issue 44): 200 requests at once on three instances of a loaded machine waited more than
  // 2 s for one of the pool's connections, failed, and opened the breaker on a database that answered:
  // -4 "cannot reach its database" for every request for a second. A wait for a busy pool's connection
  // is a wait, not an outage.
  it('a request that waits longer than a connection attempt may take, for a connection every request holds, is served', async () => {
    const database = await freshDatabase(PG_URL!);
    const store = await PostgresStore.open(database.url, { PGW_DB_POOL: '1' });
    try {
      // The one connection is held 2.5 s, longer than a connection attempt may take (2 s).
      const holder = store.get('SELECT pg_sleep(2.5) AS slept');
      const waiter = store.get<{ one: number }>('SELECT 1 AS one');
      await expect(waiter).resolves.toEqual({ one: 1 });
      await holder;
    } finally {
      await store.close();
      await database.drop();
    }
  });
});

/** A TCP proxy on loopback to the database, cut and restored on demand. */
async function tcpProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  let server: net.Server;
  const listen = async (port = 0) => {
    server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  };
  const port = await listen();
  return {
    port,
    cut: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
    restore: () => listen(port),
  };
}

describe.skipIf(!PG_URL)(`the database going away${PG_URL ? '' : ` (${SKIP_PG})`}`, async () => {
  const database = PG_URL ? await freshDatabase(PG_URL) : undefined;
  const direct = new URL(database?.url ?? 'postgres://127.0.0.1/none');
  const proxy = PG_URL ? await tcpProxy(direct) : undefined;
  const proxied = new URL(direct);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy?.port ?? 0);
  let sb: RunningSandbox;
  let base = '';
  afterAll(async () => {
    await sb?.close();
    await database?.drop();
  });

  const health = () => fetch(`${base}${HEALTH_PATH}`);

  it('serves, and says so', async () => {
    sb = await createSandbox({ dbPath: proxied.toString(), env: {} });
    const server = sb.server().listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const answer = await health();
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ status: 'ok' });
  });

  it('while the database is away: every request 503, Retry-After, -4; nothing waits on the pool', async () => {
    await proxy!.cut();
    // The request that finds the database gone is told so too (its failure opens the breaker).
    const finder = await sb.gateway.handle(buildRequest(operation('listPayIds'), {}));
    expect(finder.status).toBe(503);
    const ids = operations.map((o) => o.operationId);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...ids), { minLength: 20, maxLength: 60 }), async (batch) => {
        const answers = await Promise.all(
          batch.map((id) => sb.gateway.handle(buildRequest(operation(id), { body: {} }))),
        );
        for (const [i, a] of answers.entries()) {
          expect(a.status, batch[i]).toBe(503);
          expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
          expect(Number(JSON.parse(String(a.body)).responseCode)).toBe(-4);
        }
        const pool = (sb.store as unknown as { pool: { waitingCount: number } }).pool;
        expect(pool.waitingCount).toBe(0);
      }),
      { seed: 2823, numRuns: 10 },
    );
    // A form-mode caller is told in its own mode: XML, the gateway's -4 (finding, issue 39: it got JSON).
    const form = protocols.byId('form')!;
    const formIds = operations.filter((o) => o.protocols.includes('form')).map((o) => o.operationId);
    expect(formIds.length).toBeGreaterThan(0);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...formIds), async (id) => {
        const a = await sb.gateway.handle(buildRequest(operation(id), { body: {}, wire: 'form' }));
        expect(a.status, id).toBe(503);
        expect(a.headers['content-type'], id).toBe(form.answerType);
        expect(form.readAnswer(String(a.body))).toMatchObject({ ok: { responseCode: '-4' } });
      }),
      { seed: 3924, numRuns: 30 },
    );
    const down = await health();
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await down.json()).toEqual({ status: 'unavailable' });
  });

  it('comes back by itself once the database is back', async () => {
    await proxy!.restore();
    expect(await until(async () => (await health()).status === 200, 30_000, 250)).toBe(true);
    const answer = await sb.gateway.handle(buildRequest(operation('listPayIds'), {}));
    expect(answer.status).toBe(200);
    await proxy!.cut();
  });
});

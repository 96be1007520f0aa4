// Finding (#39, the tools as clients): `contract --notifications`, `listen` and the commands that call
// the sandbox talked HTTP with their own reader; `listen` forwarded whatever headers the sandbox's
// record of a delivery named, and printed what others sent as it came. Each command now talks through
// runtime/bounded-fetch.ts (no redirect followed, every answer capped, every exchange timed out, a
// silent party given up on after a few exchanges, each failure one line) and prints through the one
// log writer's rules. Every hostile party here is a server this test starts on loopback: an endpoint,
// a sandbox control API, and a catcher where every redirect points, which must never be reached.
import { afterAll, describe, expect, it } from 'vitest';
import { run as checkNotifications, GIVE_UP_AFTER } from '../../cli/commands/check-notifications.ts';
import { run as chaos } from '../../cli/commands/chaos.ts';
import { run as deliveries } from '../../cli/commands/deliveries.ts';
import { run as listen } from '../../cli/commands/listen.ts';
import { run as logs } from '../../cli/commands/logs.ts';
import { CONTROL_GIVE_UP_AFTER } from '../../cli/commands/sandbox-account.ts';
import {
  HOSTILE_TEXT,
  listenOnce,
  type Mode,
  notificationsAt,
  startWorld,
  unsafeLines,
  type World,
} from '../support/hostile-party.ts';
import { captured } from './captured.ts';

const DELIVERY = {
  id: 7,
  event: 'payoutTransaction',
  subject: `pay-1 ${HOSTILE_TEXT}`,
  url: 'http://merchant.example/hooks',
  body: '{"event":"payoutTransaction","payoutId":"p1","result":"x"}',
  headers: {
    'content-type': 'application/json',
    'SVC-MESSAGEHASH': 'abc123',
    authorization: 'Basic c2VjcmV0OnNlY3JldA==',
    cookie: 'session=stolen',
    'x-forwarded-for': '10.0.0.1',
    'x-api-key': 'ksmnwxab',
  },
  delivered: false,
  attempts: [],
};

/**
 * A run against its own hostile parties (an endpoint and a control API in these modes, a catcher),
 * closed after it. Each test has its own, so the tests run side by side (describe.concurrent): most
 * of them wait out a party's silence, 1 s an exchange, and those waits overlap.
 */
async function against<T>(endpoint: Mode, control: Mode | 'deliveries', run: (w: World) => Promise<T>): Promise<T> {
  const world = await startWorld({
    endpoint,
    control,
    delivery: DELIVERY,
    controlBody: () => JSON.stringify({ responseCode: 0, deliveries: [DELIVERY], requests: [] }),
  });
  try {
    return await run(world);
  } finally {
    world.close();
    caught.push(...world.parties.caught);
  }
}

/** Every request that reached a catcher, in any test: a redirect followed. None, in the file's end too. */
const caught: string[] = [];
afterAll(() => expect(caught).toEqual([]));

/** Every line a command printed: nothing raw, no card number. */
function expectSafe(lines: string[]): void {
  expect(unsafeLines(lines)).toEqual({ raw: [], cards: [] });
}

describe.concurrent('contract --notifications against a hostile endpoint', () => {
  it.each(['redirect', 'endless', 'hostile'] as const)(
    'a %s endpoint: every check answered, nothing followed, nothing printed raw',
    (mode) =>
      against(mode, 'ok', async (w) => {
        const { code, out, err } = await captured(checkNotifications, notificationsAt(w));
        expect(code).toBe(1);
        expectSafe([...out, ...err]);
        expect(w.parties.caught).toEqual([]);
        expect(out.at(-1)).toMatch(/^\d+ passed, \d+ failed$/);
        if (mode === 'endless') expect(w.parties.mostWritten).toBeLessThan(64 * 1024 * 1024);
        if (mode === 'hostile') expect(out.join('\n')).toContain('forged line');
      }),
    60_000,
  );

  it.each(['silent', 'drip', 'drop'] as const)(
    'a %s endpoint: given up after a few posts in a row without an answer, said in one line',
    (mode) =>
      against(mode, 'ok', async (w) => {
        const { code, out, err } = await captured(checkNotifications, notificationsAt(w));
        expect(code).toBe(1);
        expect(w.seen.endpoint).toBe(GIVE_UP_AFTER);
        expect(err).toHaveLength(1);
        expect(err[0]).toMatch(/the endpoint stopped answering: gave up after 3 exchanges in a row/);
        expect(out.filter((l) => l.includes('not sent (the endpoint had stopped answering)')).length).toBeGreaterThan(
          0,
        );
        expectSafe([...out, ...err]);
      }),
    60_000,
  );

  it.each(['redirect', 'endless', 'silent', 'hostile'] as const)(
    'an --effects record that is %s: read as unreadable, never followed',
    (mode) =>
      against('ok', mode, async (w) => {
        const { out, err } = await captured(checkNotifications, notificationsAt(w, true));
        expect(w.parties.caught).toEqual([]);
        const effects = out.filter((l) => l.includes('--effects'));
        expect(effects.length).toBeGreaterThan(0);
        expectSafe([...out, ...err]);
        // Silent, or past its cap (once; a slow read of 32 MiB is a time-out): read a few times, not
        // once for every check.
        if (mode === 'silent' || mode === 'endless') expect(w.seen.control).toBeLessThanOrEqual(GIVE_UP_AFTER);
      }),
    60_000,
  );
});

describe.concurrent('listen against a hostile sandbox and a hostile endpoint', () => {
  const args = (w: World, ...more: string[]) => [...listenOnce(w.endpointUrl, w.controlUrl), ...more];

  it('forwards only what the gateway posts: the media type and the signature header, none the sandbox added', () =>
    against('ok', 'deliveries', async (w) => {
      const { code, out, err } = await captured(listen, args(w));
      expect(code, [...out, ...err].join('\n')).toBe(0);
      expect(w.received).toHaveLength(1);
      const headers = w.received[0]!;
      expect(headers['content-type']).toBe('application/json');
      expect(headers['svc-messagehash']).toBe('abc123');
      for (const name of ['authorization', 'cookie', 'x-forwarded-for', 'x-api-key'])
        expect(headers[name], name).toBeUndefined();
      expect(headers.host).toBe(new URL(w.endpointUrl).host);
      expectSafe([...out, ...err]);
    }));

  it.each(['silent', 'drip', 'drop', 'endless'] as const)(
    'a %s control API: listen stops after a few calls, in one line, exit 1',
    (mode) =>
      against('ok', mode, async (w) => {
        const { code, out, err } = await captured(listen, args(w, '--all'));
        expect(code).toBe(1);
        expect(w.seen.control).toBeLessThanOrEqual(CONTROL_GIVE_UP_AFTER);
        expect(err).toHaveLength(1);
        expect(err[0]).toContain('stopped answering');
        expectSafe([...out, ...err]);
      }),
    60_000,
  );

  it('a control API that redirects: never followed, said in one line', () =>
    against('ok', 'redirect', async (w) => {
      const { code, err } = await captured(listen, args(w));
      expect(code).toBe(1);
      expect(w.parties.caught).toEqual([]);
      expect(err).toHaveLength(1);
      expectSafe(err);
    }));

  it.each(['redirect', 'endless', 'silent', 'drop', 'hostile'] as const)(
    'a %s endpoint: the delivery is tried and shown in one safe line, nothing followed',
    (mode) =>
      against(mode, 'deliveries', async (w) => {
        const { code, out, err } = await captured(listen, args(w));
        expect(code, [...out, ...err].join('\n')).toBe(0);
        expect(w.parties.caught).toEqual([]);
        expect(w.seen.endpoint).toBe(1);
        expect(out.some((l) => l.startsWith('#7 '))).toBe(true);
        expectSafe([...out, ...err]);
        if (mode === 'endless') expect(w.parties.mostWritten).toBeLessThan(64 * 1024 * 1024);
      }),
    60_000,
  );
});

describe.concurrent('the commands that call the sandbox, against a hostile control API', () => {
  const commands = { deliveries, logs, chaos } as const;
  const cases = (Object.keys(commands) as (keyof typeof commands)[]).flatMap((name) =>
    (['redirect', 'endless', 'silent', 'hostile'] as const).map((mode) => [name, mode] as const),
  );
  it.each(cases)(
    '%s against a %s control API: one line, exit 1, nothing followed',
    (name, mode) =>
      against('ok', mode, async (w) => {
        const { code, out, err } = await captured(commands[name], [
          '--base',
          w.controlUrl,
          '--sandbox-timeout-seconds',
          '1',
        ]);
        expect(code).toBe(1);
        expect(w.parties.caught).toEqual([]);
        expect(err).toHaveLength(1);
        expect(w.seen.control).toBeLessThanOrEqual(CONTROL_GIVE_UP_AFTER);
        expectSafe([...out, ...err]);
      }),
    60_000,
  );

  it('deliveries prints what the sandbox recorded without a raw escape or a card number', () =>
    against('ok', 'ok', async (w) => {
      const { code, out, err } = await captured(deliveries, ['--base', w.controlUrl]);
      expect(code, [...out, ...err].join('\n')).toBe(0);
      expect(out.join('\n')).toContain('forged line');
      expectSafe([...out, ...err]);
    }));
});

// Finding (#39, the tools as clients): `contract --notifications`, `listen` and the commands that call
// the sandbox talked HTTP with their own reader; `listen` forwarded whatever headers the sandbox's
// record of a delivery named, and printed what others sent as it came. Each command now talks through
// runtime/bounded-fetch.ts (no redirect followed, every answer capped, every exchange timed out, a
// silent party given up on after a few exchanges, each failure one line) and prints through the one
// log writer's rules. Every hostile party here is a server this test starts on loopback: an endpoint,
// a sandbox control API, and a catcher where every redirect points, which must never be reached.
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as checkNotifications, GIVE_UP_AFTER } from '../../cli/commands/check-notifications.ts';
import { run as chaos } from '../../cli/commands/chaos.ts';
import { run as deliveries } from '../../cli/commands/deliveries.ts';
import { run as listen } from '../../cli/commands/listen.ts';
import { run as logs } from '../../cli/commands/logs.ts';
import { CONTROL_GIVE_UP_AFTER } from '../../cli/commands/sandbox-account.ts';
import {
  closeParties,
  HOSTILE_TEXT,
  type Mode,
  misbehave,
  type Parties,
  startParties,
  startServer,
  unsafeLines,
  listenOnce,
} from '../support/hostile-party.ts';
import { captured } from './captured.ts';

const seen = { endpoint: 0, control: 0 };
let endpointMode: Mode = 'ok';
let controlMode: Mode | 'deliveries' = 'ok';
const received: http.IncomingHttpHeaders[] = [];
let parties: Parties;
let caught: string[];
let endpointUrl = '';
let controlUrl = '';

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

beforeAll(async () => {
  parties = await startParties();
  caught = parties.caught;
  endpointUrl = await startServer(parties, (req, res) => {
    seen.endpoint++;
    received.push(req.headers);
    misbehave(parties, endpointMode, req, res, () => '{"ok":true}');
  });
  controlUrl = await startServer(parties, (req, res) => {
    seen.control++;
    if (controlMode === 'deliveries') {
      req.resume();
      // The newest delivery first (listen's start), then one to forward, then nothing new.
      const url = new URL(req.url ?? '/', controlUrl);
      const after = Number(url.searchParams.get('after') ?? 0);
      const list = url.searchParams.has('latest') ? [] : after < DELIVERY.id ? [DELIVERY] : [];
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ responseCode: 0, deliveries: list }));
    }
    misbehave(parties, controlMode, req, res, () =>
      JSON.stringify({ responseCode: 0, deliveries: [DELIVERY], requests: [] }),
    );
  });
});

afterAll(() => closeParties(parties));

/** Every line a command printed: nothing raw, no card number. */
function expectSafe(lines: string[]): void {
  expect(unsafeLines(lines)).toEqual({ raw: [], cards: [] });
}

const reset = (endpoint: Mode, control: Mode | 'deliveries') => {
  endpointMode = endpoint;
  controlMode = control;
  seen.endpoint = 0;
  seen.control = 0;
  received.length = 0;
};

describe('contract --notifications against a hostile endpoint', () => {
  const args = (effects?: string) => [
    '--notifications',
    `${endpointUrl}/hooks`,
    '--passphrase',
    'sandbox-passphrase',
    '--timeout-seconds',
    '1',
    ...(effects ? ['--effects', effects] : []),
  ];

  it.each(['redirect', 'endless', 'hostile'] as const)(
    'a %s endpoint: every check answered, nothing followed, nothing printed raw',
    async (mode) => {
      reset(mode, 'ok');
      const { code, out, err } = await captured(checkNotifications, args());
      expect(code).toBe(1);
      expectSafe([...out, ...err]);
      expect(caught).toEqual([]);
      expect(out.at(-1)).toMatch(/^\d+ passed, \d+ failed$/);
      if (mode === 'endless') expect(parties.mostWritten).toBeLessThan(64 * 1024 * 1024);
      if (mode === 'hostile') expect(out.join('\n')).toContain('forged line');
    },
    60_000,
  );

  it.each(['silent', 'drip', 'drop'] as const)(
    'a %s endpoint: given up after a few posts in a row without an answer, said in one line',
    async (mode) => {
      reset(mode, 'ok');
      const { code, out, err } = await captured(checkNotifications, args());
      expect(code).toBe(1);
      expect(seen.endpoint).toBe(GIVE_UP_AFTER);
      expect(err).toHaveLength(1);
      expect(err[0]).toMatch(/the endpoint stopped answering: gave up after 3 exchanges in a row/);
      expect(out.filter((l) => l.includes('not sent (the endpoint had stopped answering)')).length).toBeGreaterThan(0);
      expectSafe([...out, ...err]);
    },
    60_000,
  );

  it.each(['redirect', 'endless', 'silent', 'hostile'] as const)(
    'an --effects record that is %s: read as unreadable, never followed',
    async (mode) => {
      reset('ok', mode);
      const { out, err } = await captured(checkNotifications, args(`${controlUrl}/effects`));
      expect(caught).toEqual([]);
      const effects = out.filter((l) => l.includes('--effects'));
      expect(effects.length).toBeGreaterThan(0);
      expectSafe([...out, ...err]);
      if (mode === 'silent') expect(seen.control).toBeLessThanOrEqual(GIVE_UP_AFTER);
    },
    60_000,
  );
});

describe('listen against a hostile sandbox and a hostile endpoint', () => {
  const args = (...more: string[]) => [...listenOnce(endpointUrl, controlUrl), ...more];

  it('forwards only what the gateway posts: the media type and the signature header, none the sandbox added', async () => {
    reset('ok', 'deliveries');
    const { code, out, err } = await captured(listen, args());
    expect(code).toBe(0);
    expect(received).toHaveLength(1);
    const headers = received[0]!;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['svc-messagehash']).toBe('abc123');
    for (const name of ['authorization', 'cookie', 'x-forwarded-for', 'x-api-key'])
      expect(headers[name], name).toBeUndefined();
    expect(headers.host).toBe(new URL(endpointUrl).host);
    expectSafe([...out, ...err]);
  });

  it.each(['silent', 'drip', 'drop', 'endless'] as const)(
    'a %s control API: listen stops after a few calls, in one line, exit 1',
    async (mode) => {
      reset('ok', mode);
      const { code, out, err } = await captured(listen, args('--all'));
      expect(code).toBe(1);
      expect(seen.control).toBeLessThanOrEqual(CONTROL_GIVE_UP_AFTER);
      expect(err).toHaveLength(1);
      expect(err[0]).toContain('stopped answering');
      expectSafe([...out, ...err]);
    },
    60_000,
  );

  it('a control API that redirects: never followed, said in one line', async () => {
    reset('ok', 'redirect');
    const { code, err } = await captured(listen, args());
    expect(code).toBe(1);
    expect(caught).toEqual([]);
    expect(err).toHaveLength(1);
    expectSafe(err);
  });

  it.each(['redirect', 'endless', 'silent', 'drop', 'hostile'] as const)(
    'a %s endpoint: the delivery is tried and shown in one safe line, nothing followed',
    async (mode) => {
      reset(mode, 'deliveries');
      const { code, out, err } = await captured(listen, args());
      expect(code).toBe(0);
      expect(caught).toEqual([]);
      expect(seen.endpoint).toBe(1);
      expect(out.some((l) => l.startsWith('#7 '))).toBe(true);
      expectSafe([...out, ...err]);
      if (mode === 'endless') expect(parties.mostWritten).toBeLessThan(64 * 1024 * 1024);
    },
    60_000,
  );
});

describe('the commands that call the sandbox, against a hostile control API', () => {
  const commands = { deliveries, logs, chaos } as const;
  const cases = (Object.keys(commands) as (keyof typeof commands)[]).flatMap((name) =>
    (['redirect', 'endless', 'silent', 'hostile'] as const).map((mode) => [name, mode] as const),
  );
  it.each(cases)(
    '%s against a %s control API: one line, exit 1, nothing followed',
    async (name, mode) => {
      reset('ok', mode);
      const { code, out, err } = await captured(commands[name], [
        '--base',
        controlUrl,
        '--sandbox-timeout-seconds',
        '1',
      ]);
      expect(code).toBe(1);
      expect(caught).toEqual([]);
      expect(err).toHaveLength(1);
      expect(seen.control).toBeLessThanOrEqual(CONTROL_GIVE_UP_AFTER);
      expectSafe([...out, ...err]);
    },
    60_000,
  );

  it('deliveries prints what the sandbox recorded without a raw escape or a card number', async () => {
    reset('ok', 'ok');
    const { code, out, err } = await captured(deliveries, ['--base', controlUrl]);
    expect(code).toBe(0);
    expect(out.join('\n')).toContain('forged line');
    expectSafe([...out, ...err]);
  });
});

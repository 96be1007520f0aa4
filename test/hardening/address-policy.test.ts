// Findings: the notification address policy could be walked around. Host names were never resolved
// and checked (the sandbox always sends through a function, and the check resolved only without one);
// redirects were followed to targets the policy never saw; IPv6 spellings of private and metadata
// IPv4 addresses (NAT64, 6to4, SIIT, v4-compatible) and reserved ranges (TEST-NETs, benchmarking,
// 2001::/23...) passed the literal check; control API routes registered addresses the policy refuses.
// Every test here stays on loopback: names resolve through a stub, real sockets listen on 127.0.0.1.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../sandbox/index.ts';
import { addressRefusal, urlRefusal } from '../../sandbox/url-policy.ts';
import { inBlock, SPELLINGS, V4_FORBIDDEN } from './addresses.ts';
import { ddAuth, send } from './support.ts';

const POLICY = { allowPrivate: false, allowLoopback: true };

const V6_FORBIDDEN = [
  'fc00::',
  'fd12:3456::1',
  'fe80::1',
  'febf::1',
  'fec0::1',
  'ff02::1',
  '2001:db8::1',
  '2001::1',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  '100::1',
  '64:ff9b:1::1',
  '3fff::1',
  '::',
];

describe('literal addresses: every special-purpose block, every spelling', () => {
  it('refuses each forbidden IPv4 address however it is written', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...V4_FORBIDDEN).chain(inBlock),
        fc.constantFrom(...SPELLINGS),
        fc.constantFrom('http', 'https'),
        (ip, spell, scheme) => {
          const url = `${scheme}://${spell(ip)}:8080/hook`;
          expect(urlRefusal(url, POLICY), url).toMatch(/^must not point to/);
        },
      ),
      { seed: 2819, numRuns: 3000 },
    );
  });

  it('refuses the IPv6 special-purpose blocks', () => {
    for (const ip of V6_FORBIDDEN) expect(urlRefusal(`http://[${ip}]/`, POLICY), ip).toMatch(/^must not point to/);
  });

  it('loopback through a translator is some other host: refused; loopback itself follows the policy', () => {
    expect(urlRefusal('http://[64:ff9b::127.0.0.1]/', POLICY)).toMatch(/^must not point to/);
    expect(urlRefusal('http://[2002:7f00:1::]/', POLICY)).toMatch(/^must not point to/);
    for (const url of ['http://127.0.0.1/', 'http://[::ffff:127.0.0.1]/', 'http://2130706433/', 'http://localhost./'])
      expect(urlRefusal(url, { allowPrivate: false, allowLoopback: false }), url).toBe(
        'must not point to a loopback address',
      );
  });

  it('allows public addresses, directly and embedded', () => {
    for (const ip of ['93.184.216.34', '8.8.8.8', '1.1.1.1'])
      for (const spell of SPELLINGS) expect(urlRefusal(`http://${spell(ip)}/`, POLICY), spell(ip)).toBeUndefined();
    expect(addressRefusal('2606:4700:4700::1111', POLICY)).toBeUndefined();
  });
});

/** A loopback HTTP server that records what reaches it and answers `status` (with a Location on 3xx). */
async function server(status: number, location?: string) {
  const hits: string[] = [];
  const s = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(status, location ? { location } : {});
    res.end();
  });
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  return { hits, port: (s.address() as AddressInfo).port, close: () => new Promise((r) => s.close(r)) };
}

const names: Record<string, string[]> = {};
const resolve = async (host: string) => {
  if (!names[host]) throw new Error(`ENOTFOUND ${host}`);
  return names[host]!;
};
const sb = await createSandbox({ dbPath: ':memory:', env: {}, control: true, resolve });
afterAll(() => sb.close());

describe('at send time: every hop resolved, checked, pinned; no redirect followed', () => {
  async function deliver(url: string) {
    expect((await send(sb, ddAuth(url))).json.responseCode).toBe('0');
    await sb.notifier.deliverDue();
    return (await sb.notifier.all()).at(-1)!;
  }

  it('a name that resolves to loopback (allowed) is delivered to the address checked', async () => {
    const target = await server(204);
    names['hooks.test'] = ['127.0.0.1'];
    const row = await deliver(`http://hooks.test:${target.port}/ok`);
    expect(target.hits).toEqual(['/ok']);
    expect(Number(row.delivered)).toBe(1);
    await target.close();
  });

  it('a name that resolves to a forbidden address is never connected to', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...V4_FORBIDDEN).chain(inBlock),
        fc.constantFrom(...SPELLINGS.slice(3, 6)),
        async (ip, spell) => {
          const target = await server(204);
          // The name answers the forbidden address first and loopback after: one bad address refuses it.
          names['inside.test'] = [spell(ip).replace(/^\[|\]$/g, ''), '127.0.0.1'];
          const row = await deliver(`http://inside.test:${target.port}/bad`);
          expect(target.hits).toEqual([]);
          expect(Number(row.delivered)).toBe(0);
          await target.close();
        },
      ),
      { seed: 2820, numRuns: 15 },
    );
  });

  it('a redirect is not followed: its target never sees the notification', async () => {
    const inner = await server(204);
    for (const status of [301, 302, 303, 307, 308]) {
      const outer = await server(status, `http://127.0.0.1:${inner.port}/redirected`);
      names['redirects.test'] = ['127.0.0.1'];
      const row = await deliver(`http://redirects.test:${outer.port}/hook`);
      expect(outer.hits).toEqual(['/hook']);
      expect(Number(row.delivered), String(status)).toBe(0);
      await outer.close();
    }
    expect(inner.hits).toEqual([]);
    await inner.close();
  });

  it('control API routes refuse the addresses the gateway refuses', async () => {
    const base = sb.server().listen(0, '127.0.0.1');
    await once(base, 'listening');
    for (const notifyURL of [
      'http://169.254.169.254/latest',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[::ffff:10.0.0.1]/',
    ]) {
      const answer = await fetch(`http://127.0.0.1:${(base.address() as AddressInfo).port}/_sandbox/notifications`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${sb.seed.merchantUUID}:${sb.seed.apiKey}`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ event: 'directDebitOutcome', notifyURL }),
      });
      expect(await answer.json(), notifyURL).toMatchObject({
        responseCode: -2,
        responseMessage: expect.stringMatching(/^Field 'notifyURL' is invalid: must not point to/),
      });
    }
    await new Promise((r) => base.close(r));
  });
});

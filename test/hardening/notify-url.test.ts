// Finding: notifications were POSTed to any URL given (169.254.169.254, the private network...).
// The policy: no private, link-local or reserved address; loopback allowed; configurable.
import { afterAll, describe, expect, it } from 'vitest';
import { addressesToNotify, urlRefusal } from '../../sandbox/url-policy.ts';
import { counts, ddAuth, hardeningSandbox, send, signed } from './support.ts';

const sb = await hardeningSandbox();
const open = await hardeningSandbox(':memory:', { PGW_SANDBOX_NOTIFY_PRIVATE: 'allow' });
afterAll(async () => {
  await sb.close();
  await open.close();
});

const payout = (notifyURL: string) =>
  signed('createPayouts', {
    reference: 'PO-1',
    notifyURL,
    transactions: [
      { payee: { name: 'Sam' }, transaction: { reference: 'PO-1-1', amount: 1, bsb: '802950', accNumber: '123321' } },
    ],
  });

describe('notification URL policy', () => {
  for (const url of [
    'http://169.254.169.254/latest/meta-data',
    'http://10.0.0.5/hook',
    'https://192.168.1.10/',
    'http://[fe80::1]/x',
    'http://[::ffff:10.0.0.1]/',
    'http://0.0.0.0:80/',
  ]) {
    it(`refuses ${url} with -2 naming the field, storing nothing`, async () => {
      const before = await counts(sb);
      const dd = await send(sb, ddAuth(url));
      expect(dd.json.responseCode).toBe('-2');
      expect(dd.json.responseMessage).toMatch(/^Field 'notifyURL' is invalid: must not point to /);
      const po = await send(sb, payout(url));
      expect(po.json.responseCode).toBe(-2);
      expect(await counts(sb)).toEqual(before);
    });
  }

  it('allows loopback and public addresses, and private ones when configured', async () => {
    expect((await send(sb, ddAuth('http://127.0.0.1:9999/hook'))).json.responseCode).toBe('0');
    expect((await send(sb, ddAuth('http://localhost:9999/hook'))).json.responseCode).toBe('0');
    expect((await send(sb, payout('https://merchant.example/payouts'))).json.responseCode).toBe(0);
    expect((await send(open, ddAuth('http://10.0.0.5/hook'))).json.responseCode).toBe('0');
    expect(urlRefusal('http://127.0.0.1/', { allowPrivate: false, allowLoopback: false })).toBe(
      'must not point to a loopback address',
    );
  });

  it('resolves a host name when sending: a name pointing inside is not notified', async () => {
    const policy = { allowPrivate: false, allowLoopback: true };
    expect(
      await addressesToNotify('https://inside.example/hook', policy, async () => ['93.184.216.34', '10.1.2.3']),
    ).toEqual({ refusal: 'must not point to a private or link-local address (its host resolves to 10.1.2.3)' });
    expect(await addressesToNotify('https://outside.example/hook', policy, async () => ['93.184.216.34'])).toEqual({
      addresses: ['93.184.216.34'],
    });
  });
});

// Browsers may call the sandbox from the pages it allows (sandbox/cors.ts): local servers by default
// (not the opaque origin, null, that any sandboxed frame sends: test/hardening/browser.test.ts), the
// origins of PGW_SANDBOX_ALLOWED_ORIGINS otherwise (null,loopback for the docs opened from disk).
// A preflight is answered with the contract's verbs and headers; one from another origin is refused
// clearly (403, -2 naming the Origin header); and CORS never stands in for the stubs' checks: an
// allowed page's unsigned request is refused as any other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { originPolicy } from '../../sandbox/cors.ts';
import { startSandbox, type TestSandbox } from './support.ts';

const preflight = (base: string, origin: string, path = '/payout') =>
  fetch(`${base}${path}`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,svc-api-version,svc-merchantid,svc-api-key,svc-messagehash',
    },
  });

describe('the sandbox and browsers (CORS)', () => {
  let sb: TestSandbox;
  let shared: TestSandbox;
  let fromDisk: TestSandbox;
  beforeAll(async () => {
    sb = await startSandbox();
    fromDisk = await startSandbox({ env: { PGW_SANDBOX_ALLOWED_ORIGINS: 'null,loopback' } });
    shared = await startSandbox({ env: { PGW_SANDBOX_ALLOWED_ORIGINS: 'https://docs.example.com' } });
  });
  afterAll(async () => {
    await sb?.close();
    await shared?.close();
    await fromDisk?.close();
  });

  it('answers the preflight of a local server, and of the docs opened from disk where null is allowed: the contract verbs and headers', async () => {
    expect((await preflight(sb.base, 'null')).status).toBe(403);
    for (const [base, origin] of [
      [fromDisk.base, 'null'],
      [sb.base, 'http://127.0.0.1:8080'],
      [sb.base, 'http://localhost:3000'],
    ] as const) {
      const answer = await preflight(base, origin);
      expect(answer.status, origin).toBe(204);
      expect(answer.headers.get('access-control-allow-origin')).toBe(origin);
      expect(answer.headers.get('access-control-allow-methods')).toBe('POST, GET, PATCH, PUT');
      const headers = answer.headers.get('access-control-allow-headers')!.toLowerCase().split(', ');
      for (const h of [
        'content-type',
        'svc-api-version',
        'svc-merchantid',
        'svc-api-key',
        'svc-apikey',
        'svc-messagehash',
      ])
        expect(headers, origin).toContain(h);
    }
  });

  it('refuses the preflight of another origin clearly, and does not mark its answers readable', async () => {
    const answer = await preflight(sb.base, 'https://elsewhere.example');
    expect(answer.status).toBe(403);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    expect(await answer.json()).toEqual({
      responseCode: '-2',
      responseMessage:
        "Header 'Origin' is invalid: must be an origin this sandbox allows (PGW_SANDBOX_ALLOWED_ORIGINS, docs/DEPLOY.md)",
    });
    const request = buildRequest(operation('queryCard'), { body: requestExamples(operation('queryCard'))[0]!.value });
    const posted = await fetch(`${sb.base}/post`, {
      method: 'POST',
      headers: { ...(request.headers as Record<string, string>), origin: 'https://elsewhere.example' },
      body: String(request.body),
    });
    expect(posted.headers.get('access-control-allow-origin')).toBeNull();
  });

  it("marks an allowed page's answers readable, and still holds its request to every check", async () => {
    const op = operation('processCard');
    const body = { ...(requestExamples(op)[0]!.value as Record<string, unknown>), hash: '0'.repeat(32) };
    const request = buildRequest(op, { body });
    const answer = await fetch(`${sb.base}/post`, {
      method: 'POST',
      headers: { ...(request.headers as Record<string, string>), origin: 'http://127.0.0.1:8080' },
      body: JSON.stringify(body),
    });
    expect(answer.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8080');
    expect(answer.headers.get('vary')).toBe('Origin');
    expect(await answer.json()).toMatchObject({ responseCode: '-1' });
  });

  it('a shared deployment allows only the origins it lists', async () => {
    expect((await preflight(shared.base, 'https://docs.example.com')).status).toBe(204);
    for (const origin of ['null', 'http://127.0.0.1:8080'])
      expect((await preflight(shared.base, origin)).status).toBe(403);
  });

  it('reads PGW_SANDBOX_ALLOWED_ORIGINS strictly: a path, a missing scheme or none with others is refused in one line', () => {
    expect(originPolicy('*').allows('https://anything.example')).toBe(true);
    expect(originPolicy('none').allows('null')).toBe(false);
    expect(originPolicy(undefined).allows('http://[::1]:4010')).toBe(true);
    expect(originPolicy(undefined).allows('null')).toBe(false);
    expect(originPolicy('null,loopback').allows('null')).toBe(true);
    expect(originPolicy(undefined).allows('http://127.0.0.1.example.com')).toBe(false);
    for (const bad of ['https://docs.example.com/', 'docs.example.com', 'ftp://x.example', 'none,null'])
      expect(() => originPolicy(bad), bad).toThrow(/^PGW_SANDBOX_ALLOWED_ORIGINS/);
  });
});

// The benchmark compares servers only if each answers the mix as the contract says: this keeps every
// server of npm run bench honest, the floor included, without timing anything.
import { afterAll, describe, expect, it } from 'vitest';
import { check, mix, scenarioMixes, start, wireMixes, type Started } from '../../bench/harness.ts';
import { scenarios } from '../../generated/scenarios.ts';

const running: Started[] = [];
afterAll(() => {
  for (const s of running) s.child.kill();
});

async function checked(script: string) {
  const server = await start(script);
  running.push(server);
  return { ...(await check(server.port)), stderr: server.stderr() };
}

describe('the benchmark servers answer the whole mix', () => {
  it.each([
    'servers/stubs.ts',
    'servers/floor.ts',
    'servers/express-openapi-validator.ts',
    'servers/openapi-backend.ts',
    'servers/fastify-openapi-glue.ts',
  ])('%s: every request gets its status and a result, with no warning from its libraries', async (script) => {
    const { ok, failures, stderr } = await checked(script);
    expect(failures).toEqual([]);
    expect(ok).toBe(mix.length);
    expect(stderr).toBe('');
  });

  it('the wire comparison: the stubs answer the form-mode operations in JSON and, form-encoded, in XML', async () => {
    const server = await start('servers/stubs.ts');
    running.push(server);
    expect(wireMixes.form!.length).toBe(wireMixes.json!.length);
    expect(wireMixes.form!.length).toBeGreaterThan(30);
    for (const requests of [wireMixes.json!, wireMixes.form!]) {
      const { ok, failures } = await check(server.port, requests);
      expect(failures).toEqual([]);
      expect(ok).toBe(requests.length);
    }
    // A form request answered in JSON is no answer of the form mode: the check tells.
    expect((await check(server.port, [{ ...wireMixes.form![0]!, request: wireMixes.json![0]!.request }])).ok).toBe(1);
  });

  it('the scenario comparison: the sandbox answers both mixes, and honours the scenario each request of the second names', async () => {
    const server = await start('servers/sandbox.ts', { NODE_ENV: 'development' });
    running.push(server);
    for (const requests of [scenarioMixes.plain, scenarioMixes.named]) {
      const { ok, failures } = await check(server.port, requests);
      expect(failures).toEqual([]);
      expect(ok).toBe(requests.length);
    }
    for (const [i, { request }] of scenarioMixes.named.entries()) {
      const response = await fetch(`http://127.0.0.1:${server.port}${request.path}`, {
        method: request.method,
        headers: request.headers,
        body: request.body ?? null,
      });
      await response.text();
      const header = scenarios.header.toLowerCase();
      expect(response.headers.get(header)).toBe(request.headers[header]);
      expect(request.headers[header]).toMatch(/^(approved|ok)$/);
      expect(scenarioMixes.plain[i]!.request.headers[header]).toBeUndefined();
    }
    expect(server.stderr()).toBe('');
  });

  it('the bare ceiling answers its constant to all, which the check sees as wrong only for the 201 of Get PayID', async () => {
    const { failures } = await checked('servers/bare.ts');
    expect(failures.map((f) => f.split(':')[0])).toEqual(['getPayId']);
  });
});

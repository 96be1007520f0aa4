// A server team without a partner account: the suite's preflight refuses the partner credentials,
// and its one line says how to run the rest (--skip with the partner operations' tag), which works.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { createSandbox } from '../../sandbox/index.ts';

let server: http.Server;
afterAll(() => server?.close());

const contract = (base: string, args: string[]) =>
  promisify(execFile)(
    process.execPath,
    ['contract/run.ts', '--base-url', base, '--partner-api-key', 'notthekey', '--quiet', ...args],
    { cwd: path.resolve(import.meta.dirname, '../..') },
  ).then(
    (done) => ({ ...done, code: 0 }),
    (error) => error as { code: number; stdout: string; stderr: string },
  );

it('refused partner credentials: the line names --skip with the partner tag, and that run passes', async () => {
  server = (await createSandbox({ dbPath: ':memory:' })).server();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const refused = await contract(base, ['--only', 'Partner,processCard']);
  expect(refused.code).toBe(2);
  expect(refused.stderr.trim().split('\n')).toEqual([
    expect.stringMatching(
      /^payment-gateway-contract-test: the partner credentials were refused \(checkMerchant as partnerUUID .*, or leave the partner operations out with --skip Partner$/,
    ),
  ]);

  // One operation of the run is left: no coverage bar; the reports go to a folder of this test's own.
  const reports = await mkdtemp(path.join(os.tmpdir(), 'pgw-partner-'));
  const rest = await contract(base, [
    ...['--only', 'Partner,processCard', '--skip', 'Partner', '--min-coverage', '0'],
    ...['--junit', path.join(reports, 'c.xml'), '--json', path.join(reports, 'c.json')],
  ]);
  await rm(reports, { recursive: true, force: true });
  expect(rest.stderr).toBe('');
  expect(rest.code).toBe(0);
  expect(rest.stdout).toMatch(/\b[1-9]\d* passed, 0 failed/);
});

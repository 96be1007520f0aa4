// The Postman collection (generated/postman.json) run by Newman against a started sandbox, as a user
// would run it: `npm start` on its own port and store, the collection's own variables, its
// pre-request script computing every hash. Every request must be answered with its success status
// and processed (responseCode >= 0): a hash computed wrongly would be refused with -1 or -2.
// Then once more through Prism's validating proxy (npm run mock -- --proxy), as DigitalOcean runs its
// collection in CI: Prism holds every request and every answer to the spec on the way.
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import newman from 'newman';
import { afterAll, describe, expect, it } from 'vitest';
import { startMock } from '../../mock/run.ts';
import { startSandboxProcess } from '../support/sandbox-process.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const children: ChildProcess[] = [];

/** `npm start` on a port of its own with an in-memory store; resolves with its base URL. */
async function startSandbox(): Promise<string> {
  const { child, base } = await startSandboxProcess({ PGW_DB: ':memory:' });
  children.push(child);
  return base;
}

afterAll(() => {
  for (const child of children) child.kill('SIGTERM');
});

const countRequests = (items: any[]): number =>
  items.reduce((n, item) => n + (item.item ? countRequests(item.item) : 1), 0);

async function runCollection(baseUrl: string) {
  const collection = JSON.parse(await readFile(path.join(ROOT, 'generated/postman.json'), 'utf8'));
  const summary = await new Promise<any>((resolve, reject) =>
    newman.run({ collection, envVar: [{ key: 'baseUrl', value: baseUrl }], reporters: [] }, (error, s) =>
      error ? reject(error) : resolve(s),
    ),
  );
  return {
    collection,
    summary,
    failures: summary.run.failures.map((f: any) => `${f.source?.name}: ${f.error?.test ?? ''} ${f.error?.message}`),
  };
}

// The two runs side by side (each against a sandbox of its own): the first runs while the second's Prism starts.
describe.concurrent('generated/postman.json', () => {
  it('every request from the collection is accepted by the sandbox (Newman)', async () => {
    const { collection, summary, failures } = await runCollection(await startSandbox());
    expect(failures).toEqual([]);
    const stats = summary.run.stats;
    expect(stats.requests.total).toBe(countRequests(collection.item));
    expect(stats.requests.failed).toBe(0);
    // Two checks a request, at least: its status and its responseCode or media type.
    expect(stats.assertions.total).toBeGreaterThanOrEqual(2 * stats.requests.total);
    // One request at least for every operation the gateway answers (webhooks are not called).
    const names = new Set(summary.run.executions.map((e: any) => e.item.name));
    const operations = JSON.parse(await readFile(path.join(ROOT, 'generated/openapi.json'), 'utf8'));
    let expected = 0;
    for (const item of Object.values<any>(operations.paths)) {
      for (const op of Object.values<any>(item)) {
        const ids: string[] = op?.['x-methods']
          ? Object.values<any>(op['x-methods']).map((d) => d.operationId)
          : op?.['x-operation']
            ? [op.operationId]
            : [];
        for (const id of ids) expect(names).toContain(id);
        expected += ids.length;
      }
    }
    expect(names.size).toBe(expected);
  });

  it("through Prism's validating proxy, no request and no answer breaks the spec", async () => {
    const violations: string[] = [];
    const proxy = await startMock({
      port: 0,
      host: '127.0.0.1',
      proxy: await startSandbox(),
      onViolation: (request, found) =>
        violations.push(...found.map((v) => `${request}: ${v.location.join('.')}: ${v.message}`)),
    });
    try {
      const { summary, failures } = await runCollection(proxy.url);
      expect(failures).toEqual([]);
      expect(summary.run.stats.requests.total).toBeGreaterThan(50);
      expect(violations).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});

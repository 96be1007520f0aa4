// The sandboxes of one process share one copy of the published document (sandbox/index.ts loadSpec:
// read once, not once a sandbox), frozen to its leaves: no sandbox, handler or test can change what
// another reads, and two sandboxes started side by side run on it.
import { describe, expect, it } from 'vitest';
import { createSandbox, loadSpec } from '../../sandbox/index.ts';

const READ_ONLY = /read.only|not extensible|Cannot assign|Cannot add/;

describe('the document the sandboxes of a process read', () => {
  it('is read once and shared', () => {
    expect(loadSpec()).toBe(loadSpec());
  });

  it('is frozen to its leaves: a change throws and changes nothing', () => {
    const spec = loadSpec();
    const hashes = spec.paths['/post'].post['x-methods'].processCard.hashes;
    for (const node of [spec, spec.info['x-sandbox'], spec.paths['/post'].post, hashes, hashes[0]])
      expect(Object.isFrozen(node)).toBe(true);
    const merchant = spec.info['x-sandbox'].merchantUUID;
    expect(() => {
      spec.info['x-sandbox'].merchantUUID = 'changed';
    }).toThrow(READ_ONLY);
    expect(() => hashes.push({ name: 'extra' })).toThrow(READ_ONLY);
    expect([loadSpec().info['x-sandbox'].merchantUUID, hashes.length]).toEqual([merchant, 1]);
  });

  it('serves two sandboxes started side by side', async () => {
    const sandboxes = await Promise.all([createSandbox({ dbPath: ':memory:' }), createSandbox({ dbPath: ':memory:' })]);
    try {
      for (const sb of sandboxes) {
        const answer = await sb.gateway.handle({ verb: 'GET', url: '/openapi.json', headers: {} });
        expect(answer.status).toBe(200);
      }
    } finally {
      await Promise.all(sandboxes.map((sb) => sb.close()));
    }
  });
});

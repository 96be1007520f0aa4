// The sandboxes of one process share one copy of the published document (sandbox/index.ts loadSpec:
// read once, not once a sandbox), frozen: no sandbox, handler or test can change what another reads.
import { describe, expect, it } from 'vitest';
import { createSandbox, loadSpec } from '../../sandbox/index.ts';

describe('the document the sandboxes of a process read', () => {
  it('is read once and shared', () => {
    expect(loadSpec()).toBe(loadSpec());
  });

  it('cannot be changed by one sandbox under another', async () => {
    const [one, two] = await Promise.all([
      createSandbox({ dbPath: ':memory:' }),
      createSandbox({ dbPath: ':memory:' }),
    ]);
    try {
      const spec = loadSpec();
      const sandbox = spec.info['x-sandbox'];
      expect(() => {
        sandbox.merchantUUID = 'changed';
      }).toThrow(TypeError);
      expect(() => {
        spec.paths['/post'].post['x-methods'].processCard.hashes.push({ name: 'extra' });
      }).toThrow(TypeError);
      expect(loadSpec().info['x-sandbox'].merchantUUID).not.toBe('changed');
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});

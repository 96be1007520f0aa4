// The scenarios of areas.test.ts again, each sandbox on a fresh PostgreSQL database (PGW_TEST_DATABASE_URL):
// the same behaviour on both stores.
import { expect, it } from 'vitest';
import { PG_URL, SKIP_PG, startSandbox, useStore } from './support.ts';

if (PG_URL) {
  useStore(PG_URL);
  it('runs its sandboxes on PostgreSQL', async () => {
    const t = await startSandbox();
    expect(t.sandbox.store.kind).toBe('postgres');
    await t.close();
  });
  await import('./areas.test.ts');
} else it.skip(`areas scenarios on PostgreSQL: ${SKIP_PG}`, () => {});

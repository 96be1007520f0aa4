// The client's size budget: at most 10 kB minified + gzip, openapi-fetch excluded (npm run size prints it).
import { describe, expect, it } from 'vitest';
import { bundleSize } from '../../scripts/measure-client.ts';

describe('client size', () => {
  it('stays within 10 kB minified + gzip, and pulls in nothing Node-only', async () => {
    const { gzipped } = await bundleSize('generated/client.ts');
    expect(gzipped).toBeLessThanOrEqual(10 * 1024);
  });

  it('bundles the notification receiver for a browser too (no node: imports), within 10 kB minified + gzip', async () => {
    const { gzipped } = await bundleSize('notifications/index.ts');
    expect(gzipped).toBeLessThanOrEqual(10 * 1024);
  });
});

// Why `npm ci` on a machine whose own Node is 20 warns EBADENGINE, and why the warning does not apply:
// npm checks each package's engines against the Node that runs npm, while every npm script runs on
// the Node that npm ci installs (the devDependency `node`). That Node must satisfy every engine in
// the lock, and what the older Node does not satisfy must be development tools only (README, Set up).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
const packages = Object.entries<{ version?: string; engines?: { node?: string }; dev?: boolean }>(lock.packages);
const locked = lock.packages['node_modules/node'].version as string;

describe('engines', () => {
  it(`the Node that npm ci installs (${locked}) satisfies every package's engines`, () => {
    const unmet = packages.filter(([, p]) => p.engines?.node && !semver.satisfies(locked, p.engines.node));
    expect(unmet.map(([name, p]) => `${name || 'this package'} ${p.engines!.node}`)).toEqual([]);
  });

  it('what Node 20 does not satisfy is this package (for its users) and development tools only', () => {
    const unmet = packages.filter(([, p]) => p.engines?.node && !semver.satisfies('20.19.0', p.engines.node));
    expect(unmet.filter(([name, p]) => name !== '' && !p.dev).map(([name]) => name)).toEqual([]);
  });
});

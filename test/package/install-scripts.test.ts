// Every dependency that ships an install script is reviewed in its package.json's allowScripts
// (npm 11.16+ lists the unreviewed ones on every install; npm 12 skips their scripts): approved where
// the package needs it, denied where it only phones home. A new dependency with an install script
// fails here until someone decides, not on a user's install.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

const json = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8'));

/** The names of the locked packages whose install scripts npm would run. */
function withInstallScripts(lockFile: string): string[] {
  const lock = json(lockFile);
  const names = Object.entries(lock.packages as Record<string, { hasInstallScript?: boolean }>)
    .filter(([, entry]) => entry.hasInstallScript)
    .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length));
  return [...new Set(names)].sort();
}

describe('install scripts', () => {
  for (const dir of ['.', 'scripts/tools']) {
    it(`${dir}: each one is approved or denied in package.json's allowScripts, and nothing else is listed`, () => {
      const reviewed = Object.keys(json(path.join(dir, 'package.json')).allowScripts ?? {})
        .map((key) => key.replace(/(.)@.*$/, '$1'))
        .sort();
      expect(reviewed).toEqual(withInstallScripts(path.join(dir, 'package-lock.json')));
    });
  }

  it("denies Prism's usage ping (@scarf/scarf) and approves what the package runs: Node 24's binary, esbuild's", () => {
    expect(json('package.json').allowScripts).toEqual({ node: true, esbuild: true, '@scarf/scarf': false });
  });
});

// The package as `npm pack` makes it (prepack builds dist/ first), packed once per test run for every
// file that installs or inspects it (test/contract/package.test.ts, test/package/install.test.ts).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './contract.ts';
import { oncePerRun } from './once-per-run.ts';

export interface Packed {
  /** The tarball's path; read it, never change it: other files use it too. */
  tarball: string;
  /** The paths the tarball holds, as npm lists them. */
  files: string[];
}

export function packed(): Promise<Packed> {
  return oncePerRun('npm-pack', async (folder) => {
    const { stdout } = await promisify(execFile)('npm', ['pack', '--json', '--pack-destination', folder], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 32 << 20,
    });
    const [info] = JSON.parse(stdout);
    return { tarball: path.join(folder, info.filename), files: info.files.map((f: { path: string }) => f.path) };
  });
}

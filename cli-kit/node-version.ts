// The commands need Node 22.13 or later (node:sqlite, type stripping in a checkout): an older Node is
// told so in one line instead of failing on the first import it lacks.
import { UsageError } from './args.ts';

export function checkNode(name: string): void {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major < 22 || (major === 22 && minor < 13))
    throw new UsageError(
      `needs Node.js 22.13 or later; this is ${process.version} (${name} runs on the node first in PATH)`,
    );
}

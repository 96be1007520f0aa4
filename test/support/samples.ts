// Sample output in the guides, produced by the tests that run it (never copied by hand): a test
// holds its lines against the block between `<!-- sample:NAME -->` and `<!-- /sample:NAME -->` in a
// guide (docs/SERVER-TEAMS.md unless it names another). Like a snapshot, a stale block fails the test (a clean clone in CI must not pass by
// rewriting its own docs); `PGW_UPDATE_SAMPLES=1 npm test -- FILE` writes the block instead.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withBlock } from '../../scripts/marked-block.ts';

export function writeSample(name: string, text: string, page = 'docs/SERVER-TEAMS.md'): void {
  const file = fileURLToPath(new URL(`../../${page}`, import.meta.url));
  const guide = readFileSync(file, 'utf8');
  const next = withBlock(guide, `sample:${name}`, `\`\`\`text\n${text.trimEnd()}\n\`\`\``, page);
  if (next === guide) return;
  if (process.env.PGW_UPDATE_SAMPLES !== '1')
    throw new Error(
      `${page}'s sample ${name} is not what the test printed; \`PGW_UPDATE_SAMPLES=1 npm test -- <this file>\` rewrites it:\n${text}`,
    );
  writeFileSync(file, next);
}

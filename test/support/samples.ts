// Sample output in the guides, written by the tests that produce it (never copied by hand): a test
// puts its lines between `<!-- sample:NAME -->` and `<!-- /sample:NAME -->` in the guide, so a
// change of wording shows in the guide's diff of the run that made it.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const GUIDE = fileURLToPath(new URL('../../docs/SERVER-TEAMS.md', import.meta.url));

export function writeSample(name: string, text: string): void {
  const guide = readFileSync(GUIDE, 'utf8');
  const open = `<!-- sample:${name} -->\n`;
  const close = `<!-- /sample:${name} -->`;
  const from = guide.indexOf(open);
  const to = guide.indexOf(close);
  if (from < 0 || to < from) throw new Error(`docs/SERVER-TEAMS.md has no ${open.trim()} … ${close} block`);
  const next = `${guide.slice(0, from + open.length)}\`\`\`text\n${text.trimEnd()}\n\`\`\`\n${guide.slice(to)}`;
  if (next !== guide) writeFileSync(GUIDE, next);
}

// Specmatic's backward-compatibility verdict beside ours (`npm run diff`) on the release snapshots:
// 0.1.0 → 0.2.0 and 0.2.0 → the current document (docs/TOOLS.md, "Specmatic"). Ours says which
// changes break a client (major); Specmatic's `compare` says whether the newer document is backward
// compatible. Both see the JSON mode only: Specmatic reads no form/XML mode (see specmatic.ts).
// Run: npm run tools:specmatic-compat (Java and scripts/tools installed: bash scripts/setup/tools.sh).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { canonicalOnly, type Doc } from '../../../runtime/document.ts';
import { diffDocs, type Loaded, load, releaseSnapshot } from '../../diff/index.ts';
import { ROOT } from '../../diff/load.ts';

/** A copy of the document with the spec's own wire format only (runtime/document.ts). */
const jsonMode = canonicalOnly;

/** Specmatic's verdict: compatible or not, or undefined when it refuses to load a document (`refused`). */
function specmaticVerdict(base: Doc, revision: Doc): { compatible?: boolean; breaks: string[]; refused: string[] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'specmatic-compat-'));
  const [a, b] = [path.join(dir, 'base.json'), path.join(dir, 'revision.json')];
  writeFileSync(a, JSON.stringify(jsonMode(base)));
  writeFileSync(b, JSON.stringify(jsonMode(revision)));
  const jar = path.join(ROOT, 'scripts/tools/node_modules/specmatic/specmatic.jar');
  const run = spawnSync('java', ['-jar', jar, 'compare', a, b], { cwd: dir, encoding: 'utf8', maxBuffer: 256 << 20 });
  const out = `${run.stdout}${run.stderr}`;
  const breaks = [...new Set([...out.matchAll(/^API: (.+)$/gm)].map((m) => m[1]!))];
  const verdict = /The newer contract is (not )?backward compatible/.exec(out);
  const refused = verdict ? [] : [...new Set([...out.matchAll(/^>> (.+)$/gm)].map((m) => m[1]!))];
  return { ...(verdict ? { compatible: verdict[1] === undefined } : {}), breaks, refused };
}

export async function compareVerdicts(base: Loaded, revision: Loaded) {
  const ours = await diffDocs(base, revision);
  const breaking = ours.changes.filter((c) => c.bump === 'major');
  const theirs = specmaticVerdict(base.doc, revision.doc);
  return {
    pair: `${base.label} → ${revision.label}`,
    ours: { breaking: breaking.length, operations: [...new Set(breaking.flatMap((c) => c.operations))] },
    specmatic: theirs,
    // No verdict to compare when Specmatic refuses a document (the releases before this one lack `items`).
    agree: theirs.compatible === undefined ? null : (breaking.length === 0) === theirs.compatible,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const current = await load(path.join(ROOT, 'generated/openapi.json'));
  const pairs: [Loaded, Loaded][] = [
    [await load(releaseSnapshot('0.1.0')), await load(releaseSnapshot('0.2.0'))],
    [await load(releaseSnapshot('0.2.0')), current],
  ];
  for (const [base, revision] of pairs) console.log(JSON.stringify(await compareVerdicts(base, revision), null, 1));
}

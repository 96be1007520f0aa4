// docs/DEPLOY.md says exactly which rules the mock keeps and which need the sandbox: the block between
// `<!-- mock:rules -->` markers is what mock/kept-rules.ts writes now from the spec, never typed.
// `PGW_UPDATE_SAMPLES=1 npx vitest run THIS FILE` rewrites it (as the guides' samples are written).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { blockIn, withBlock } from '../../scripts/marked-block.ts';
import { mockDocument } from '../../mock/front.ts';
import { KEPT_MARKS, keptRules, NEEDS_STATE, ruleMarks } from '../../mock/kept-rules.ts';
import { ROOT } from '../support/contract.ts';

const PAGE = path.join(ROOT, 'docs/DEPLOY.md');
const NAME = 'mock:rules';

describe("docs/DEPLOY.md's list of the rules the mock keeps", () => {
  const doc = mockDocument();

  it('is what the spec gives now', () => {
    const page = readFileSync(PAGE, 'utf8');
    const now = keptRules(doc);
    if (process.env.PGW_UPDATE_SAMPLES === '1' && blockIn(page, NAME) !== now)
      writeFileSync(PAGE, withBlock(page, NAME, now, 'docs/DEPLOY.md'));
    expect(blockIn(readFileSync(PAGE, 'utf8'), NAME)).toBe(now);
  });

  it('names every rule mark the spec holds, kept or not, and follows the spec: an echo added is listed', () => {
    const marks = ruleMarks(doc);
    expect([...marks.keys()].sort()).toEqual(
      [...KEPT_MARKS, ...Object.keys(NEEDS_STATE)].filter((m) => marks.has(m)).sort(),
    );
    const text = keptRules(doc);
    for (const mark of marks.keys()) expect(text).toContain(`\`${mark}\``);
    const changed = structuredClone(doc);
    changed.components.schemas.SurchargeResult!.properties!.surchargeAmount = {
      ...(changed.components.schemas.SurchargeResult!.properties!.surchargeAmount as object),
      'x-echo': 'surchargeAmount',
    };
    expect(keptRules(changed)).not.toBe(text);
    expect(keptRules(changed)).toContain('`SurchargeResult`: transactionAmount, surchargeAmount');
  });
});

// The sandbox's facts in docs/CLIENT-TEAMS.md (test cards and their outcomes, forced amounts, when a
// purchase settles, token lifetime, surcharge rates, direct debit days, payout accounts) are rendered
// from the sandbox and the spec (test/support/guide-facts.ts), never typed: the block between
// `<!-- facts:sandbox -->` markers is what they give now. `PGW_UPDATE_SAMPLES=1 npm test -- THIS FILE`
// rewrites it (as the guides' samples are written).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { blockIn, withBlock } from '../../scripts/marked-block.ts';
import { doc, ROOT } from '../support/contract.ts';
import { sandboxFacts, sandboxFactsBlock, settlementWords } from '../support/guide-facts.ts';

const PAGE = path.join(ROOT, 'docs/CLIENT-TEAMS.md');
const NAME = 'facts:sandbox';

describe("docs/CLIENT-TEAMS.md's sandbox facts", () => {
  it('are what the sandbox and the spec give now', () => {
    const page = readFileSync(PAGE, 'utf8');
    const now = sandboxFactsBlock(doc);
    if (process.env.PGW_UPDATE_SAMPLES === '1' && blockIn(page, NAME) !== now)
      writeFileSync(PAGE, withBlock(page, NAME, now, 'docs/CLIENT-TEAMS.md'));
    expect(blockIn(readFileSync(PAGE, 'utf8'), NAME)).toBe(now);
  });

  it('word when a purchase settles from the spec, and agree with the sandbox: the same day in Sydney, else the next business day', () => {
    const rule = doc.components.schemas.SettledDate['x-settlement-date'];
    expect(settlementWords(rule)).toBe(
      'on the day they are made in Australia/Sydney time when that is a business day (Monday to Friday) and they are made before 18:00 there, else on the next business day',
    );
    expect(rule.cutOff.sandbox).toBe('18:00:00');
    expect(blockIn(readFileSync(PAGE, 'utf8'), NAME)).not.toMatch(/next day/);
    // A part of the rule the words do not say (a cut-off hour, say) fails rather than going unsaid.
    expect(() => settlementWords({ ...rule, cutoff: '18:00' })).toThrow(/cutoff/);
  });

  it('a changed fact changes the block: a card outcome, a forced amount, the token lifetime', () => {
    const facts = sandboxFacts();
    const now = sandboxFactsBlock(doc, facts);
    const { '4564710000000004': _approved, ...fewer } = facts.cards;
    for (const changed of [
      { ...facts, cards: fewer },
      { ...facts, triggers: { ...facts.triggers, '102.99': [6, 'x', '99', 'y'] as [number, string, string, string] } },
      { ...facts, tokenMinutes: facts.tokenMinutes + 1 },
      { ...facts, directDebitDays: facts.directDebitDays + 1 },
    ])
      expect(sandboxFactsBlock(doc, changed)).not.toBe(now);
  });
});

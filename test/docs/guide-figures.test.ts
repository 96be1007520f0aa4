// The figures the guides state inside sentences, held to where they come from (test/support/
// guide-figures.ts): a default, a limit, a saved run. A figure changed in the code fails here until
// the guide says the new one; and the one figure of a guide the code keeps only as behaviour (the
// notification receiver's replay window) is checked by what the receiver does.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { occurredAt, signTestNotification, verifyNotification } from '../../notifications/index.ts';
import { doc, ROOT } from '../support/contract.ts';
import { guideFigures, prose } from '../support/guide-figures.ts';

const page = (file: string) => prose(readFileSync(path.join(ROOT, file), 'utf8'));

describe('the figures in the guides', () => {
  it.each(guideFigures().map((f) => [`${f.page}: ${f.says}`, f] as const))('%s', (_name, figure) => {
    expect(
      page(figure.page).includes(prose(figure.says)),
      `${figure.page} must say "${figure.says}" (from ${figure.source})`,
    ).toBe(true);
  });

  it('CLIENT-TEAMS.md: the replay window is what verifyNotification refuses outside of', () => {
    const seconds = Number(/`DEFAULT_TOLERANCE_SECONDS` \((\d+) s\)/.exec(page('docs/CLIENT-TEAMS.md'))?.[1]);
    expect(seconds).toBeGreaterThan(0);
    // The spec's merchantCreated example, signed, read `age` seconds after the time it carries.
    const example = Object.values<any>(
      doc.webhooks.merchantCreated.post.requestBody.content['application/json'].examples,
    )[0].value;
    const note = signTestNotification(example, { passphrase: 'p' });
    const dated = occurredAt(JSON.parse(note.body))!;
    const at = (age: number) => {
      try {
        verifyNotification(note.body, note.headers, { passphrase: 'p', now: new Date(dated.getTime() + age * 1000) });
        return 'accepted';
      } catch (error) {
        return (error as { reason?: string }).reason;
      }
    };
    expect(at(seconds - 1)).toBe('accepted');
    expect(at(seconds + 1)).toBe('stale');
  });
});

// Every sample a reader can reach on an operation's page, in a real headless Chromium, the docs opened
// from disk: a sample of operations from every tag that has requests (the first and the last of each,
// and a form-mode one more where the tag has one), each language picked in the page's own picker
// (curl, TypeScript, PHP, Python, Ruby, C#) in the JSON mode, then the form/XML mode picked by the
// request's media type and by the answer's: the page must show that mode's sample for each language
// and the example answer in XML. What the page shows is compared with the samples the docs are built
// from (docs-view.ts), not with the page's data. Screenshots of each mode are kept in test-results/samples/.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocols } from '../../generated/protocols.ts';
import { answersIn, codeSamples, samplesIn } from '../../scripts/generators/docs-view.ts';
import { contractOperations, type Operation } from '../../scripts/lib/contract.ts';
import { chromiumMissing, sharedBrowser } from '../support/browser.ts';
import { ROOT, doc } from '../support/contract.ts';

const PAGE = pathToFileURL(path.join(ROOT, 'generated/docs/index.html')).href;
const SHOTS = path.join(ROOT, 'test-results/samples');
const formProtocol = protocols.byId('form')!;
const form = doc['x-wire-formats'].form as { request: string; answer: string; xml: { declaration: string } };
const formSamples = (op: Parameters<typeof codeSamples>[0], d: typeof doc) => samplesIn(formProtocol, op, d);
const formAnswers = (op: Parameters<typeof codeSamples>[0], d: typeof doc) => answersIn(formProtocol, op, d);
const ops = contractOperations(doc).filter((op) => !op.webhook);

/** The operations sampled: of every tag, its first and last operation, and its first of the form mode. */
function sampled(): Operation[] {
  const chosen = new Set<Operation>();
  for (const tag of doc.tags.map((t: { name: string }) => t.name)) {
    const of = ops.filter((op) => op.tags[0] === tag);
    if (!of.length) continue; // Notifications: the gateway sends them, their pages have no request sample
    chosen.add(of[0]!);
    chosen.add(of.at(-1)!);
    const formOne = of.find((op) => formSamples(op, doc).length);
    if (formOne) chosen.add(formOne);
  }
  return [...chosen];
}

const missing = chromiumMissing();

/** A sample's text less its final line breaks (the page shows none after the last line). */
const lines = (text: string) => text.replace(/\n+$/, '');
/**
 * How long a panel may take to show what was picked: the page re-renders after a pick's menu has
 * closed, and on a loaded machine later than the pick's button says so (read at once, the panel
 * still showed the previous language or mode, and the failure left the next test in the form mode).
 */
const settled = (message: string) => ({ message, timeout: 30_000 });
/** The page's text of a code block: its lines as the reader copies them. */
const shown = async (panel: Locator) => lines(await panel.locator('pre:visible').first().innerText());

describe.skipIf(missing !== undefined)(
  `every sample is reachable on its page${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let browser: Browser;
    let page: Page;
    const pageErrors: string[] = [];
    /** What was reached: operationId → the language×mode pairs seen. */
    const reached = new Map<string, string[]>();

    beforeAll(async () => {
      browser = await sharedBrowser();
      page = await browser.newPage({ viewport: { width: 1500, height: 1000 } });
      page.on('pageerror', (e) => pageErrors.push(String(e)));
      mkdirSync(SHOTS, { recursive: true });
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
    });

    /** Opens an operation's page: its section, request panel and answer panel. */
    async function open(op: Operation) {
      await page.goto(`${PAGE}#/${op.tags[0]!.toLowerCase().replace(/\s+/g, '-')}/${op.operationId.toLowerCase()}`);
      const section = page.locator(`[data-item-kind="httpItem"][id$="/${op.operationId.toLowerCase()}"]`);
      await section.waitFor({ timeout: 60_000 });
      const request = section.locator('.panel-request-samples');
      await request.waitFor();
      return { section, request, answer: section.locator('.panel-response-samples') };
    }

    /** Picks an entry of one of the page's dropdowns, as a reader does: open it, click the entry. */
    async function pick(button: Locator, entry: string) {
      if ((await button.innerText()).trim() === entry) return;
      if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click();
      await page.getByRole('menuitem', { name: entry, exact: true }).filter({ visible: true }).first().click();
      await expect.poll(async () => (await button.innerText()).trim()).toBe(entry);
    }

    const languagePicker = (request: Locator) =>
      request.locator('[data-component-name="Panel/PanelHeader"] [data-testid="dropdown"] > button').last();

    for (const op of sampled()) {
      const json = codeSamples(op, doc);
      const formMode = formSamples(op, doc);
      it(`${op.operationId} (${op.tags[0]}): each language's sample in the JSON mode${formMode.length ? ', then the form/XML mode by either media type' : ''}`, async () => {
        const { request, answer } = await open(op);
        const seen: string[] = [];
        // Every language of the page's picker is one of the operation's samples, and each shows its own.
        await languagePicker(request).click();
        const offered = (await page.getByRole('menuitem').filter({ visible: true }).allInnerTexts()).map((t) =>
          t.trim(),
        );
        await languagePicker(request).click();
        await expect.poll(() => languagePicker(request).getAttribute('aria-expanded')).toBe('false');
        expect(offered).toEqual(json.map((s) => s.label));
        expect(offered).toEqual(['curl', 'TypeScript', 'PHP', 'Python', 'Ruby', 'C#']);
        for (const sample of json) {
          await pick(languagePicker(request), sample.label);
          await expect
            .poll(() => shown(request), settled(`${op.operationId} ${sample.label}`))
            .toBe(lines(sample.source));
          seen.push(`${sample.label}×json`);
          if (sample.label === 'TypeScript')
            await request.screenshot({ path: path.join(SHOTS, `${op.operationId}-json-TypeScript.png`) });
        }
        if (formMode.length) {
          const answers = formAnswers(op, doc);
          const typeOf = (panel: Locator, label: string) => panel.locator(`button[aria-label="${label}"]`);
          // The mode picked by the request's media type: each language's form sample (curl's where it has none).
          await pick(typeOf(request, 'Request media type'), form.request);
          for (const sample of json) {
            await pick(languagePicker(request), sample.label);
            const own = formMode.find((s) => s.label === sample.label);
            await expect
              .poll(() => shown(request), settled(`${op.operationId} ${sample.label} form`))
              .toBe(lines((own ?? formMode.find((s) => s.label === 'curl')!).source));
            const caption = () => request.getByTestId('mode-sample').locator('p').innerText();
            if (!own)
              await expect
                .poll(caption, settled(`${op.operationId} ${sample.label} caption`))
                .toContain(`No ${sample.label} sample of the form/XML mode`);
            seen.push(`${sample.label}×form${own ? '' : ' (curl)'}`);
            // The example answer in the mode: the one picked, in XML.
            const example = (await typeOf(answer, 'Example').innerText()).trim();
            await expect
              .poll(() => shown(answer), settled(`${op.operationId} answer ${example}`))
              .toBe(lines(answers[example]!));
          }
          await pick(languagePicker(request), 'curl');
          await request.screenshot({ path: path.join(SHOTS, `${op.operationId}-form-curl.png`) });
          await answer.screenshot({ path: path.join(SHOTS, `${op.operationId}-form-answer.png`) });
          // Another answer example, still in XML.
          const examples = Object.keys(answers);
          if (examples.length > 1) {
            await pick(typeOf(answer, 'Example'), examples.at(-1)!);
            await expect
              .poll(() => shown(answer), settled(`${op.operationId} answer`))
              .toBe(lines(answers[examples.at(-1)!]!));
          }
          // The mode picked by the answer's media type: the XML answer, and the request's sample in the mode.
          await pick(typeOf(answer, 'Response media type'), form.answer);
          await expect
            .poll(() => shown(request), settled(`${op.operationId} request, answer in XML`))
            .toBe(lines(formMode.find((s) => s.label === 'curl')!.source));
          await expect
            .poll(async () => (await shown(answer)).startsWith(form.xml.declaration), settled(`${op.operationId} XML`))
            .toBe(true);
          seen.push('answer×xml');
          // And back: JSON picked, the JSON samples and answer again.
          await pick(typeOf(answer, 'Response media type'), 'application/json');
          await expect
            .poll(() => shown(request), settled(`${op.operationId} back to JSON`))
            .toBe(lines(json[0]!.source));
          await expect
            .poll(() => request.getByTestId('mode-sample').count(), settled(`${op.operationId} caption`))
            .toBe(0);
          await expect
            .poll(async () => (await shown(answer)).startsWith('{'), settled(`${op.operationId} JSON answer`))
            .toBe(true);
        }
        reached.set(op.operationId, seen);
      }, 120_000);
    }

    it('reached every language on every operation sampled, and each form-mode one in both modes; the page threw nothing', () => {
      const tags = new Set(sampled().map((op) => op.tags[0]));
      expect([...tags].sort()).toEqual(
        doc.tags
          .map((t: { name: string }) => t.name)
          .filter((t: string) => t !== 'Notifications')
          .sort(),
      );
      for (const [id, seen] of reached) {
        for (const language of ['curl', 'TypeScript', 'PHP', 'Python', 'Ruby', 'C#'])
          expect(seen, id).toContain(`${language}×json`);
        if (formSamples(ops.find((o) => o.operationId === id)!, doc).length)
          expect(seen.filter((s) => s.includes('×form')).length, id).toBe(6);
      }
      expect(reached.size).toBe(sampled().length);
      expect(pageErrors).toEqual([]);
    });
  },
);

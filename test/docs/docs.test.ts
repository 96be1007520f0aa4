// The documentation in a real headless Chromium, opened from disk: every operation listed, the /post
// method dropdown complete, provenance visible, and not one request outside the page or console error.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, doc } from '../support/contract.ts';
import { sharedBrowser } from '../support/browser.ts';

const page_url = pathToFileURL(path.join(ROOT, 'generated/docs/index.html')).href;
const slug = (tag: string) => tag.toLowerCase().replace(/\s+/g, '-');

describe('generated/docs/index.html in Chromium', () => {
  let browser: Browser;
  let page: Page;
  const outside: string[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    browser = await sharedBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('request', (r) => {
      if (!/^(file|data|blob):/.test(r.url())) outside.push(r.url());
    });
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    await page.goto(page_url);
    await page.getByTestId('menu-item-label').first().waitFor();
  }, 600_000);
  afterAll(() => browser?.close());

  const labels = () => page.getByTestId('menu-item-label').allInnerTexts();

  it('introduces the gateway: authentication, hash recipes, response codes, sandbox and mock, a client quick start', async () => {
    const text = (await labels()).join('\n');
    for (const section of [
      'Authentication',
      'Hash recipes',
      'Response codes',
      'Sandbox and mock',
      'Client quick start',
      'Quirks this contract keeps on purpose',
    ]) {
      expect(text).toContain(section);
    }
  });

  it('lists every operation under its tag', async () => {
    for (const tag of doc.tags.map((t: { name: string }) => t.name)) {
      await page.goto(`${page_url}#/${slug(tag)}`);
      await page.getByTestId('menu-item-label').filter({ hasText: tag }).first().waitFor();
      const listed = (await labels()).join('\n');
      const sources = tag === 'Notifications' ? doc.webhooks : doc.paths;
      for (const item of Object.values<any>(sources)) {
        for (const op of Object.values<any>(item)) {
          if (op?.tags?.[0] !== tag) continue;
          // A shared path is listed method by method: each has its own entry.
          const methods = op['x-methods'] ? Object.values<any>(op['x-methods']).map((m) => m.summary) : [op.summary];
          for (const summary of methods) expect(listed, `${tag}: ${summary}`).toContain(summary);
        }
      }
    }
  });

  it('writes out every hash recipe: its canonical form and its worked example', async () => {
    await page.goto(`${page_url}#/section/Hash-recipes`);
    await page.getByText('Worked example:').first().waitFor();
    const text = await page.locator('body').innerText();
    for (const [name, recipe] of Object.entries<any>(doc['x-hash-recipes'])) {
      expect(text, name).toContain(`${name} (`);
      expect(text, name).toContain(recipe.example.hash);
    }
    expect(text).toContain(
      'md5(lower(\n    md5(passphrase)\n  + merchantUUID\n  + transactionAmount\n  + transactionCurrency\n))',
    );
  });

  it('each method of a shared path has its own page: processCapture shows CaptureResult and its own samples', async () => {
    await page.goto(`${page_url}#/direct-api/processcapture`);
    const panel = page.getByTestId('middle-panel').first();
    await page.getByText('Sent as POST /post with "method": "processCapture"').first().waitFor();
    const text = await page.locator('body').innerText();
    // Its own request and answer: the capture's result schema, not the purchase's.
    const own = text.slice(text.indexOf('Sent as POST /post with "method": "processCapture"'));
    expect(own.slice(0, own.indexOf('Sent as POST /post with "method": "refundCard"'))).toContain('CaptureResult');
    // Its own samples: the request sample sends method processCapture, the answer is its example.
    await page.getByText('processCapture approved').first().waitFor();
    expect(await page.getByText('"method":"processCapture"', { exact: false }).count()).toBeGreaterThan(0);
    void panel;
  });

  it('every operation has a curl sample with its hash and a typed-client sample', async () => {
    await page.goto(`${page_url}#/direct-api/processcapture`);
    await page.getByText('# hash (body), recipe transaction', { exact: false }).first().waitFor();
    // The typed-client sample sits behind the sample dropdown: it is in the page's data.
    expect(await page.content()).toContain('client.processCapture(');
  });

  it('shows each Direct API method in both wire formats: form-encoded requests, XML answers, form samples', async () => {
    await page.goto(`${page_url}#/direct-api/processcapture`);
    await page.getByText('Also taken form-encoded (method=processCapture', { exact: false }).first().waitFor();
    const content = await page.content();
    // The form request example and the XML answer example sit behind the content-type switches: in the page's data.
    // (The page's embedded data writes < as \u003c.)
    expect(content).toContain('method=processCapture&merchantUUID=');
    expect(content).toContain('\\u003cmwResponse>\\u003cresponseCode>0\\u003c/responseCode>');
    // The form/XML mode's samples, shown when the reader picks its media type (test/docs/samples-reach.test.ts).
    expect(content).toContain('id="pgw-sample-modes"');
    expect(content).toContain("-H 'content-type: application/x-www-form-urlencoded'");
  });

  it('marks what the seed does not show as inferred, with the reason', async () => {
    await page.goto(`${page_url}#/direct-api`);
    // The badge on inferred operations and schemas...
    await page.getByText('Inferred', { exact: true }).first().waitFor();
    // ...and the reason in their description.
    await page.goto(`${page_url}#/payouts`);
    await page
      .getByText(/^Inferred: The seed names Create Payouts/)
      .first()
      .waitFor();
  });

  it('requests nothing outside itself and logs no console error; a screenshot is kept', async () => {
    await page.goto(`${page_url}#/payto`);
    await page.getByTestId('middle-panel').first().waitFor();
    mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
    await page.screenshot({ path: path.join(ROOT, 'test-results/docs.png'), fullPage: false });
    expect(outside).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});

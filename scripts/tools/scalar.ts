// Scalar's API reference (the standalone browser bundle of @scalar/api-reference) renders the
// document in Debian's headless Chromium (../lib/chromium.ts), as a team would host it: one page, the bundle and the
// document served from 127.0.0.1. Only the loopback resolves (--host-resolver-rules) and background
// networking is off, so a page that needs the internet shows it. Checked: every path operation and
// webhook appears by its summary, and the page throws no error.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS } from '../lib/chromium.ts';
import type { ToolContext, ToolReport, ToolRunner } from './report.ts';
import { installedVersion, secondsSince, ToolNotInstalled } from './lib/tool.ts';

const VERBS = ['get', 'post', 'put', 'patch', 'delete'];

const page = (title: string) => `<!doctype html>
<html><head><meta charset="utf-8"><title>${title}</title></head>
<body><div id="app"></div>
<script src="/standalone.js"></script>
<script>Scalar.createApiReference('#app', { url: '/openapi.json', withDefaultFonts: false, hideClientButton: true, telemetry: false })</script>
</body></html>`;

/** The summaries a reader must find: each path operation's and each webhook's. */
function summaries(doc: any): { where: string; summary: string }[] {
  const out: { where: string; summary: string }[] = [];
  for (const [kind, items] of [
    ['', doc.paths],
    ['webhook ', doc.webhooks ?? {}],
  ] as const)
    for (const [route, item] of Object.entries<any>(items))
      for (const verb of VERBS)
        if (item[verb]?.summary)
          out.push({ where: `${kind}${verb.toUpperCase()} ${route}`, summary: item[verb].summary });
  return out;
}

const run: ToolRunner = async (ctx: ToolContext): Promise<ToolReport> => {
  const start = performance.now();
  const version = installedVersion(ctx, '@scalar/api-reference');
  if (!existsSync(CHROMIUM)) throw new ToolNotInstalled(`${CHROMIUM} is missing (bash scripts/setup/chromium.sh)`);
  const bundle = await readFile(
    path.join(ctx.toolsDir, 'node_modules/@scalar/api-reference/dist/browser/standalone.js'),
  );
  const documentText = await readFile(ctx.documentJson);
  const doc = JSON.parse(documentText.toString('utf8'));
  const files: Record<string, [string, Buffer | string]> = {
    '/': ['text/html', page(doc.info.title)],
    '/standalone.js': ['text/javascript', bundle],
    '/openapi.json': ['application/json', documentText],
  };
  const server = createServer((req, res) => {
    const file = files[req.url ?? ''];
    res.writeHead(file ? 200 : 404, { 'content-type': file?.[0] ?? 'text/plain' }).end(file?.[1] ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [...CHROMIUM_FLAGS],
  });
  const errors: string[] = [];
  const outside = new Set<string>();
  try {
    const tab = await browser.newPage();
    tab.on('pageerror', (e) => errors.push(e.message));
    tab.on('request', (r) => {
      const host = new URL(r.url()).hostname;
      if (!['127.0.0.1', 'localhost'].includes(host) && r.url().startsWith('http')) outside.add(host);
    });
    await tab.goto(`${origin}/`, { waitUntil: 'load' });
    const wanted = summaries(doc);
    // Scalar renders sections as they come into view: wait for the first, then scroll to the end.
    // Scalar renders the reference as it is read: open every group of the sidebar (each lists its
    // operations by summary), then scroll the content to its end.
    await tab.getByText(doc.info.title).first().waitFor({ timeout: 60_000 });
    const closed = tab.getByRole('button', { name: /^Open Group/ });
    for (let i = 0; i < 50 && (await closed.count()) > 0; i++) await closed.first().click({ timeout: 5000 });
    await tab.mouse.move(900, 400);
    for (let i = 0; i < 60; i++) {
      await tab.mouse.wheel(0, 5000);
      await tab.waitForTimeout(100);
    }
    const text = await tab.evaluate(() => document.body.innerText);
    const missing = wanted.filter((w) => !text.includes(w.summary));
    const found = wanted.length - missing.length;
    return {
      tool: 'Scalar API reference',
      version,
      role: 'documentation (standalone page, headless Chromium)',
      loadsStrict: errors.length === 0,
      checks: { passed: found + (errors.length ? 0 : 1), failed: missing.length + (errors.length ? 1 : 0), skipped: 0 },
      works: [
        `renders the document offline: ${found} of ${wanted.length} path operations and webhooks appear by their summary`,
        ...(errors.length ? [] : ['no page error']),
        ...(outside.size ? [] : ['asks for nothing outside 127.0.0.1 (with withDefaultFonts: false)']),
      ],
      limits: [
        {
          what: 'each shared path (/post, /token, /partner, /processCard, /payframe) is one operation; its methods are the branches of one request body',
          why: 'Scalar, as OpenAPI, lists operations by path and verb; the methods are a oneOf keyed by the method discriminator',
          workaround:
            "the package's own reference (generated/docs/index.html, npm run docs) lists one entry per method",
          outsideDocument: true,
        },
        ...(missing.length
          ? [
              {
                what: `missing from the page: ${missing.map((m) => m.where).join(', ')}`,
                why: 'not rendered by Scalar',
                workaround: 'npm run tools -- --only scalar, and look at the page',
                outsideDocument: false,
              },
            ]
          : []),
        ...(errors.length
          ? [
              {
                what: `page errors: ${errors.slice(0, 3).join('; ')}`,
                why: 'thrown by Scalar on this document',
                workaround: '–',
                outsideDocument: false,
              },
            ]
          : []),
        ...(outside.size
          ? [
              {
                what: `asks for ${[...outside].join(', ')} (blocked here)`,
                why: 'the standalone page loads some resources from the internet',
                workaround: 'host them yourself, or configure them off',
                outsideDocument: true,
              },
            ]
          : []),
      ],
      seconds: secondsSince(start),
    };
  } finally {
    await browser.close();
    server.close();
  }
};

export default run;

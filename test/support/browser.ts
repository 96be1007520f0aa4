// Debian's headless Chromium for the browser tests (scripts/lib/chromium.ts), installed by the project's
// own set-up script when it is missing (CI machines start without it; `npx playwright install` cannot
// download browsers here).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserServer } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS } from '../../scripts/lib/chromium.ts';
import { sharedChromium } from './shared-servers.ts';

/** The checkout, found from this file rather than from ./contract.ts, which compiles the document's schemas as it loads. */
const ROOT = path.resolve(import.meta.dirname, '../..');

export function ensureChromium(): string {
  if (!existsSync(CHROMIUM)) execFileSync('bash', [path.join(ROOT, 'scripts/setup/chromium.sh')], { stdio: 'inherit' });
  return CHROMIUM;
}

/** Chromium as a server that test files connect to (test/support/shared-servers.global.ts starts one per run). */
export function chromiumServer(): Promise<BrowserServer> {
  return chromium.launchServer({ executablePath: ensureChromium(), args: [...CHROMIUM_FLAGS] });
}

/**
 * The run's shared Chromium (started by the first file that asks), connected: a file makes its own
 * contexts and pages, and its browser.close() disconnects it without stopping the shared one.
 */
export async function sharedBrowser(): Promise<Browser> {
  return chromium.connect((await sharedChromium()).wsEndpoint);
}

/** Why a browser test cannot run here, if it cannot: Chromium is missing and cannot be installed. */
export function chromiumMissing(): string | undefined {
  try {
    ensureChromium();
    return undefined;
  } catch (error) {
    return `Chromium is missing and could not be installed (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`;
  }
}

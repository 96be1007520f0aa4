// Debian's Chromium for the browser tests, installed by the project's own set-up script when it is
// missing (CI machines start without it; `npx playwright install` cannot download browsers here).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { ROOT } from './contract.ts';

const CHROMIUM = '/usr/bin/chromium';

export function ensureChromium(): string {
  if (!existsSync(CHROMIUM)) execFileSync('bash', [path.join(ROOT, 'scripts/setup/chromium.sh')], { stdio: 'inherit' });
  return CHROMIUM;
}

/** Chromium with no background traffic; `args` adds flags (a test's host resolver rules). */
export function launchChromium(args: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: ensureChromium(),
    // No background traffic: this machine's network is closed, and the docs must need none.
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...args,
    ],
  });
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

// The published document, as the commands read it from the package (source checkout or install).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Doc } from '../runtime/document.ts';

const require = createRequire(import.meta.url);

export const packageFile = (name: string): string => require.resolve(`payment-gateway-contract/${name}`);

/** The sandbox's default accounts, its approved test card and a customer (info.x-sandbox). */
export function sandboxDefaults(): Doc['info']['x-sandbox'] {
  return JSON.parse(readFileSync(packageFile('openapi.json'), 'utf8')).info['x-sandbox'];
}

/**
 * Where a guide the package ships (docs/NAME) is, as a user in this folder types it: relative within
 * the folder (docs/CLIENT-TEAMS.md in the checkout, node_modules/payment-gateway-contract/docs/… in an
 * app that installed it), else its full path.
 */
export function guidePath(name: string, from = process.cwd()): string {
  const file = path.join(path.dirname(packageFile('package.json')), 'docs', name);
  const relative = path.relative(from, file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}

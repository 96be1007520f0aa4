// The published document, as the commands read it from the package (source checkout or install).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Doc } from '../runtime/document.ts';

const require = createRequire(import.meta.url);

export const packageFile = (name: string): string => require.resolve(`payment-gateway-contract/${name}`);

/** The sandbox's default accounts, its approved test card and a customer (info.x-sandbox). */
export function sandboxDefaults(): Doc['info']['x-sandbox'] {
  return JSON.parse(readFileSync(packageFile('openapi.json'), 'utf8')).info['x-sandbox'];
}

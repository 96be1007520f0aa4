// The published document, as the commands read it from the package (source checkout or install).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const packageFile = (name: string): string => require.resolve(`payment-gateway-contract/${name}`);

/** The sandbox's default accounts (info.x-sandbox). */
export function sandboxDefaults(): { merchantUUID: string; partnerUUID: string; apiKey: string; passphrase: string } {
  return JSON.parse(readFileSync(packageFile('openapi.json'), 'utf8')).info['x-sandbox'];
}

// A server shared by the run's test files (test/support/shared-servers.global.ts): started by the
// first file that asks, reused by the others, stopped when the run ends. A file must not stop it.
import http from 'node:http';
import { inject } from 'vitest';

function ask<T>(name: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const request = http.get({ socketPath: inject('sharedServers'), path: `/${name}` }, (answer) => {
      const parts: Buffer[] = [];
      answer.on('data', (c: Buffer) => parts.push(c));
      answer.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        if (answer.statusCode === 200) resolve(JSON.parse(text) as T);
        else reject(new Error(`the shared ${name} could not be started:\n${text}`));
      });
    });
    request.on('error', reject);
  });
}

/** Prism serving the whole contract (as `npm run mock` starts it), for a front of the file's own (startMock's `prism`). */
export const sharedPrism = (): Promise<{ port: number }> => ask('prism');

/** Headless Chromium for playwright's connect (test/support/browser.ts's connectChromium). */
export const sharedChromium = (): Promise<{ wsEndpoint: string }> => ask('chromium');

/** The run's TypeScript compiler (test/support/tsc-server.ts): the Unix socket it takes checks on. */
export const sharedTsc = (): Promise<{ socket: string }> => ask('tsc');

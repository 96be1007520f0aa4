#!/usr/bin/env node
// npm run mock (or the package's bin, payment-gateway-mock): the whole contract served by Prism behind
// the front that picks each method's example. `--proxy URL` puts Prism as a validating proxy before a
// real server and prints each contract violation it sees.
//
//   node mock/run.ts [--port 4011] [--host 127.0.0.1] [--proxy URL]
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createFront, type Violation } from './front.ts';

const require = createRequire(import.meta.url);

async function freePort(): Promise<number> {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Starts Prism on a free loopback port and resolves once it listens. */
export async function startPrism(proxy?: string, onLine: (line: string) => void = () => {}): Promise<{ prism: ChildProcess; port: number }> {
  const port = await freePort();
  const spec = require.resolve('payment-gateway-contract/openapi.json');
  const cli = path.join(path.dirname(require.resolve('@stoplight/prism-cli/package.json')), 'dist/index.js');
  const args = proxy ? ['proxy', spec, proxy, '--errors'] : ['mock', spec];
  const prism = spawn(process.execPath, [cli, ...args, '-p', String(port), '-h', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let buffered = '';
  const ready = new Promise<void>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        onLine(line);
        if (line.includes('Prism is listening')) resolve();
      }
    };
    prism.stdout!.on('data', read);
    prism.stderr!.on('data', read);
    prism.on('exit', (code) => reject(new Error(`Prism exited with ${code}`)));
  });
  await ready;
  return { prism, port };
}

export async function startMock(options: { port: number; host: string; proxy?: string; onLine?: (line: string) => void; onViolation?: (request: string, violations: Violation[]) => void }) {
  const { prism, port } = await startPrism(options.proxy, options.onLine);
  const front = createFront({ target: { host: '127.0.0.1', port }, choosesExamples: !options.proxy, ...(options.onViolation ? { onViolation: options.onViolation } : {}) });
  front.listen(options.port, options.host);
  await once(front, 'listening');
  const address = front.address() as net.AddressInfo;
  return {
    url: `http://${options.host}:${address.port}`,
    close: async () => {
      prism.kill();
      await new Promise((resolve) => front.close(resolve));
    },
  };
}

// Run as a program (npm run mock, or the package's bin through its symlink), not when imported.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '4011' }, host: { type: 'string', default: '127.0.0.1' }, proxy: { type: 'string' } } });
  const started = performance.now();
  // Prism's own log only with MOCK_VERBOSE; in proxy mode each violation is printed as it is found.
  const onLine = (line: string) => process.env.MOCK_VERBOSE && console.log(line);
  const onViolation = (request: string, violations: Violation[]) => {
    for (const v of violations) console.log(`contract violation: ${request}: ${v.location.join('.')}: ${v.message}`);
  };
  const mock = await startMock({ port: Number(values.port), host: values.host, ...(values.proxy ? { proxy: values.proxy } : {}), onLine, onViolation });
  console.log(`${values.proxy ? `validating proxy before ${values.proxy}` : 'mock'} ready at ${mock.url} in ${Math.round(performance.now() - started)} ms`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => mock.close().then(() => process.exit(0)));
}

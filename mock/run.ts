#!/usr/bin/env node
// npm run mock, `payment-gateway mock`, or the payment-gateway-mock bin: the whole contract served by
// Prism behind the front that picks each method's example and refuses as the gateway does.
// `--proxy URL` puts Prism as a validating proxy before a real server and prints each contract
// violation it sees. Prism is an optional peer dependency: without it, one line says what to install.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { isMain, listen, parse, portOf, runCommand, UsageError, type CommandSpec } from '../cli-kit/index.ts';
import { accountsFromFile } from './accounts.ts';
import type { Violation } from './front.ts';
import type { Account } from '../server-stubs/index.ts';
import { type LineSink, logWriter } from '../runtime/log-line.ts';

const require = createRequire(import.meta.url);

export const PRISM_VERSION = '5.16.0';

/** Prism's command-line entry, or a one-line refusal that says how to install it. */
function prismCli(): string {
  try {
    return path.join(path.dirname(require.resolve('@stoplight/prism-cli/package.json')), 'dist/index.js');
  } catch {
    throw new UsageError(
      `the mock runs Prism, which is not installed: npm install --save-dev @stoplight/prism-cli@${PRISM_VERSION}`,
    );
  }
}

/** The line PORT_TELLER writes on Prism's stderr: the port Prism's server listens on. */
const PORT_LINE = 'payment-gateway-mock: prism listens on port';

/**
 * Loaded into Prism's process before Prism (node --import): says on stderr which port Prism's server
 * took, so that Prism's own log can stay off unless asked for. At its default level Prism logs every
 * request in some 20 KB of formatted text: measured on 600 requests, 4.6 s of Prism's CPU at that
 * level and 1.0 s with warnings only, and 12.5 MB the front had to read through. Below info it logs
 * at `fatal` only (why it could not start, the line an early exit reports): its validator logs every
 * violation of a request at `error`, and the front sends it requests the gateway refuses to learn
 * them (it reads them from the sl-violations header): at `warn`, the contract suite's --mock run
 * made Prism write 29.5 MB (242,594 lines, each through pino, jsonrepair and signale) that nobody
 * read, and cost it 14.0-16.0 s of CPU; at `fatal`, 5.5-5.7 s (two runs each).
 */
const PORT_TELLER = `data:text/javascript,${encodeURIComponent(`import net from 'node:net';
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once('listening', () => {
    const address = this.address();
    if (address && typeof address === 'object') process.stderr.write('\\n${PORT_LINE} ' + address.port + '\\n');
  });
  return listen.apply(this, args);
};`)}`;

/**
 * Starts Prism on a free loopback port and resolves once it listens. `onLine` gets Prism's own log,
 * every request at its default level; without it Prism logs only why it stops (fatal).
 */
export async function startPrism(
  proxy?: string,
  onLine?: (line: string) => void,
): Promise<{ prism: ChildProcess; port: number }> {
  const cli = prismCli();
  const spec = require.resolve('payment-gateway-contract/openapi.json');
  const args = proxy ? ['proxy', spec, proxy, '--errors'] : ['mock', spec];
  // Port 0: Prism takes a free port as it listens, and PORT_TELLER says which. A port found free and
  // released first could be taken by another process before Prism binds it (seen on a loaded machine).
  const prism = spawn(
    process.execPath,
    ['--import', PORT_TELLER, cli, ...args, '-p', '0', '-h', '127.0.0.1', '--verboseLevel', onLine ? 'info' : 'fatal'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let buffered = '';
  const ready = new Promise<number>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        if (line.startsWith(PORT_LINE)) resolve(Number(line.slice(PORT_LINE.length)));
        else if (line) onLine?.(line);
      }
    };
    prism.stdout!.on('data', read);
    prism.stderr!.on('data', read);
    prism.on('exit', (code) =>
      reject(
        new Error(
          `Prism exited with ${code} before listening${buffered ? `: ${buffered.trim().split('\n').pop()}` : ''}`,
        ),
      ),
    );
  });
  // Prism never outlives this process, however it ends.
  const stop = () => prism.kill();
  process.once('exit', stop);
  prism.once('exit', () => process.off('exit', stop));
  const port = await ready;
  return { prism, port };
}

export async function startMock(options: {
  port: number;
  host: string;
  proxy?: string;
  onLine?: (line: string) => void;
  onListening?: (url: string) => void;
  onPrismStart?: () => void;
  onViolation?: (request: string, violations: Violation[]) => void;
  onRefusal?: (request: string, message: string) => void;
  /**
   * A Prism already serving the contract (startPrism's port) to front instead of starting one: it is
   * not stopped by close(). Several mocks may front one Prism (the tests share one per run).
   */
  prism?: { port: number };
  /** Accounts beside the spec's sandbox accounts. */
  accounts?: readonly Account[];
  /** How long Prism may take over one example (default 10 s). */
  prismTimeoutMs?: number;
}) {
  // The front takes its port first: a port in use is refused before Prism is started at all.
  const target = { host: '127.0.0.1', port: 0 };
  let prismListens!: () => void;
  const ready = new Promise<void>((resolve) => (prismListens = resolve));
  // Loaded when a mock starts: `--help` and a mistake in the arguments need neither the front nor the stubs.
  const { createFront } = await import('./front.ts');
  const front = createFront({
    target,
    ready,
    choosesExamples: !options.proxy,
    ...(options.onViolation ? { onViolation: options.onViolation } : {}),
    ...(options.onRefusal ? { onRefusal: options.onRefusal } : {}),
    ...(options.accounts ? { accounts: options.accounts } : {}),
    ...(options.prismTimeoutMs ? { prismTimeoutMs: options.prismTimeoutMs } : {}),
  });
  const bound = await listen(front, options.port, options.host, '--port');
  options.onListening?.(`http://${options.host}:${bound}`);
  let prism: ChildProcess | undefined;
  if (options.prism && !options.proxy) target.port = options.prism.port;
  else {
    options.onPrismStart?.();
    try {
      const started = await startPrism(options.proxy, options.onLine);
      prism = started.prism;
      target.port = started.port;
    } catch (error) {
      front.close();
      throw error;
    }
  }
  prismListens();
  return {
    url: `http://${options.host}:${bound}`,
    close: async () => {
      prism?.kill();
      await new Promise((resolve) => front.close(resolve));
    },
  };
}

/**
 * The mock's console lines, each through `write`: Prism's own log (only when verbose), each contract
 * violation as it is found, and each refused request in one line (the gateway's words, not Prism's
 * list of every branch it tried).
 */
export function mockLog(sink: LineSink, verbose = false) {
  // The one log writer (runtime/log-line.ts): a path, a field's name, Prism's words about them are
  // the caller's text, written with card numbers masked and control characters escaped.
  const write = logWriter(sink);
  return {
    // Prism's own log is asked of it only when it is printed (startPrism).
    ...(verbose ? { onLine: (line: string) => write(line) } : {}),
    onViolation: (request: string, violations: Violation[]) => {
      for (const v of violations) write(`contract violation: ${request}: ${v.location.join('.')}: ${v.message}`);
    },
    onRefusal: (request: string, message: string) => write(`refused: ${request}: ${message}`),
    onPrismStart: () => write('starting Prism (a few seconds)...'),
  };
}

export const mockSpec = (name: string): CommandSpec => ({
  name,
  usage: '[--port PORT] [--host HOST] [--accounts FILE] [--proxy URL]',
  summary:
    "Serves the whole contract from its examples (Prism behind a front that picks each method's own example and keeps every rule that needs no state: credentials and hashes checked for the accounts it knows, echoes, sums, the card masked). A request the gateway would refuse gets the gateway's refusal (a negative responseCode naming the field, or -1), with Prism's violations in the sl-violations header and the refusal in one line on the console. With --proxy, Prism validates the traffic to a real server instead and prints each contract violation.",
  options: {
    port: { type: 'string', short: 'p', value: 'PORT', default: '4011', help: 'port to listen on (0: any free port)' },
    host: { type: 'string', value: 'HOST', default: '127.0.0.1', help: 'address to listen on' },
    accounts: {
      type: 'string',
      value: 'FILE',
      help: "a JSON array of accounts ({kind: merchant|partner, id, apiKey, passphrase}) the mock knows beside the spec's sandbox accounts",
    },
    proxy: {
      type: 'string',
      value: 'URL',
      help: 'validate requests to and answers from this server instead of mocking',
    },
  },
  env: { MOCK_VERBOSE: "1: print Prism's own log" },
  notes: [
    `Needs @stoplight/prism-cli ${PRISM_VERSION} (an optional peer dependency). A client's Prefer: example=NAME header chooses another example.`,
  ],
});

export async function main(name: string, argv: string[]): Promise<void> {
  const parsed = parse(mockSpec(name), argv);
  if (parsed === 'exit') return;
  const values = parsed.values as { port?: string; host?: string; proxy?: string; accounts?: string };
  if (values.proxy !== undefined && !URL.canParse(values.proxy))
    throw new UsageError(`--proxy takes the server's URL, e.g. http://127.0.0.1:4010, not '${values.proxy}'`);
  const port = portOf(values.port, '--port', 4011);
  const host = values.host ?? '127.0.0.1';
  let accounts: Account[] | undefined;
  try {
    accounts = values.accounts === undefined ? undefined : accountsFromFile(values.accounts);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const started = performance.now();
  const mock = await startMock({
    port,
    host,
    ...(values.proxy ? { proxy: values.proxy } : {}),
    ...(accounts ? { accounts } : {}),
    ...mockLog(process.stdout, Boolean(process.env.MOCK_VERBOSE)),
  });
  // Listening for a stop before saying it is ready: a SIGTERM sent on reading that line would
  // otherwise end this process alone and leave its Prism running with the port.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => mock.close().then(() => process.exit(0)));
  console.log(
    `${values.proxy ? `validating proxy before ${values.proxy}` : 'mock'} ready at ${mock.url} in ${Math.round(performance.now() - started)} ms`,
  );
}

// Run as a program (npm run mock, or the package's bin through its symlink), not when imported.
if (isMain(import.meta.url))
  await runCommand('payment-gateway-mock', () => main('payment-gateway-mock', process.argv.slice(2)));

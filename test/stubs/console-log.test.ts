// The stubs tell the server's own console what they refuse and cannot answer: a newcomer's server
// (test/fixtures/newcomer-server.ts, no logger given, NODE_ENV unset) with one missing handler and one
// wrong result sees both, and a refusal, one line each, naming operation, method, check, field and
// rule, never a secret or a card number. A logger given replaces the console; `false` silences it.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples, sandbox } from '../../contract/index.ts';
import { createGateway, createNodeServer } from '../../server-stubs/index.ts';
import { chooseLogger, consoleLogger, inDevelopment } from '../../server-stubs/core/log.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';
import { writeSample } from '../support/samples.ts';

const fixture = fileURLToPath(new URL('../fixtures/newcomer-server.ts', import.meta.url));
/** Puts an environment variable back as it was: unset stays unset (assigning undefined would set "undefined"). */
const restore = (name: string, value: string | undefined) => {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
};
const example = (id: string) => structuredClone(requestExamples(operation(id))[0]!.value);

/** Sends a request as buildRequest makes it to a server listening at base. */
async function post(base: string, id: string, body: Record<string, unknown>) {
  const request = buildRequest(operation(id), { body, signBody: true });
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >;
  const response = await fetch(`${base}${request.url}`, {
    method: request.verb,
    headers,
    body: request.body as string,
  });
  return {
    status: response.status,
    body: (await response.json()) as { responseCode: string; responseMessage: string },
  };
}

/** The newcomer's server as a program under this NODE_ENV (none: development): its base URL and its stderr so far. */
function newcomerServer(nodeEnv: string | undefined) {
  const server = { base: '', stderr: '', child: undefined as ChildProcess | undefined };
  beforeAll(async () => {
    const { NODE_ENV: _test, ...env } = process.env;
    const child = spawn(process.execPath, [fixture], {
      env: nodeEnv === undefined ? env : { ...env, NODE_ENV: nodeEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.child = child;
    child.stderr!.on('data', (chunk: Buffer) => {
      server.stderr += chunk.toString();
    });
    const [port] = (await once(child.stdout!, 'data')) as [Buffer];
    server.base = `http://127.0.0.1:${String(port).trim()}`;
  });
  afterAll(() => void server.child?.kill('SIGTERM'));
  return server;
}

describe("a newcomer's server, started as a program", () => {
  const server = newcomerServer(undefined);

  it('sees the missing handler, the wrong result and a refusal on its own console, one line each', async () => {
    const { base } = server;
    const missing = await post(base, 'processCard', example('processCard'));
    expect(missing.status).toBe(500);
    const wrong = await post(base, 'getSurcharge', example('getSurcharge'));
    expect(wrong.status).toBe(500);
    const refused = await post(base, 'processCard', { ...example('processCard'), paymentCardExpiry: '02/29' });
    expect(refused.body.responseCode).toBe('-2');
    await expect.poll(() => server.stderr.split('\n').filter(Boolean).length).toBe(3);
    const lines = server.stderr.trim().split('\n');
    expect(lines[0]).toBe(
      'payment-gateway: ERROR answered 5xx operation=processCard method=processCard check=handler errorCode=PGW_ERR_NOT_IMPLEMENTED code=-4 status=500 message="processCard is not implemented by this server"',
    );
    expect(lines[1]).toBe(
      'payment-gateway: ERROR answer violates the contract operation=getSurcharge method=getSurcharge check=result violation="Field \'totalAmount\' is required (SurchargeResult)"',
    );
    expect(lines[2]).toBe(
      'payment-gateway: refused operation=processCard method=processCard check=schema errorCode=PGW_ERR_FIELD_INVALID_PATTERN field=paymentCardExpiry rule=pattern code=-2 message="Field \'paymentCardExpiry\' is invalid: must be MMYY, for example 0229"',
    );
    writeSample('stubs-console', lines.join('\n'));
    const card = String(example('processCard').paymentCardNumber);
    for (const secret of [sandbox.apiKey, sandbox.passphrase, card, String(example('processCard').hash)])
      expect(server.stderr).not.toContain(secret);
  });
});

describe('the same server under NODE_ENV=production', () => {
  const server = newcomerServer('production');

  it("logs its own faults, the broken answer log mode sends on among them, and not the callers' refusals", async () => {
    const { base } = server;
    const refused = await post(base, 'processCard', { ...example('processCard'), paymentCardExpiry: '02/29' });
    expect(refused.body.responseCode).toBe('-2');
    // Log mode (production's default) sends the answer that lacks totalAmount: the line is its only trace.
    const wrong = await post(base, 'getSurcharge', example('getSurcharge'));
    expect(wrong.status).toBe(200);
    const missing = await post(base, 'processCard', example('processCard'));
    expect(missing.status).toBe(500);
    await expect.poll(() => server.stderr.split('\n').filter(Boolean).length).toBe(2);
    expect(server.stderr.trim().split('\n')).toEqual([
      'payment-gateway: ERROR answer violates the contract operation=getSurcharge method=getSurcharge check=result violation="Field \'totalAmount\' is required (SurchargeResult)"',
      expect.stringMatching(/^payment-gateway: ERROR answered 5xx operation=processCard /),
    ]);
  });
});

describe('the logger option', () => {
  const request = () =>
    buildRequest(operation('processCard'), { body: { ...example('processCard'), transactionCurrency: 'XYZ' } });

  it('takes a logger with info/warn/error (pino-shaped) in place of the console', async () => {
    const seen: [string, Record<string, unknown> | undefined][] = [];
    const gateway = createGateway({
      handlers: echoHandlers(),
      accounts,
      logger: { info: (m, f) => seen.push([m, f]), warn() {}, error() {} },
    });
    await gateway.handle(request());
    expect(seen).toEqual([
      [
        'refused',
        expect.objectContaining({
          operation: 'processCard',
          check: 'schema',
          errorCode: 'PGW_ERR_FIELD_INVALID_ENUM',
          field: 'transactionCurrency',
          rule: 'enum',
          code: -2,
        }),
      ],
    ]);
  });

  it("masks a card number the caller put in what a refusal names (a form's charset) for a logger given", async () => {
    const seen: unknown[] = [];
    const gateway = createGateway({
      handlers: echoHandlers(),
      accounts,
      logger: { info: (_m, f) => seen.push(f), warn() {}, error() {} },
    });
    const form = buildRequest(operation('processCard'), { body: example('processCard'), wire: 'form' });
    const contentType = `${String(form.headers['content-type'])}; charset=4564710000000004`;
    const response = await gateway.handle({ ...form, headers: { ...form.headers, 'content-type': contentType } });
    expect(response.status).toBe(415);
    expect(seen).toHaveLength(1);
    expect(JSON.stringify(seen)).toContain('456471XXXXXX0004');
    expect(JSON.stringify(seen)).not.toContain('4564710000000004');
  });

  it('names the path, not its first operation, for a refusal made before the method is chosen', async () => {
    const seen: [string, Record<string, unknown> | undefined][] = [];
    const gateway = createGateway({
      handlers: echoHandlers(),
      accounts,
      logger: { info: (m, f) => seen.push([m, f]), warn() {}, error() {} },
    });
    await gateway.handle({ ...request(), body: JSON.stringify({ ...example('processCard'), method: 'fooBar' }) });
    expect(seen).toHaveLength(1);
    expect(seen[0]![1]).toMatchObject({ path: '/post', check: 'method', operation: undefined, method: undefined });
  });

  it('is silenced by false, and off by default in a test run (NODE_ENV=test)', async () => {
    const lines: string[] = [];
    const original = process.stderr.write;
    process.stderr.write = ((chunk: unknown) => lines.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      await createGateway({ handlers: {}, accounts, logger: false }).handle(request());
      await createGateway({ handlers: {}, accounts }).handle(request()); // NODE_ENV=test under vitest
    } finally {
      process.stderr.write = original;
    }
    expect(lines).toEqual([]);
    const nodeEnv = (NODE_ENV?: string) => inDevelopment(NODE_ENV === undefined ? {} : { NODE_ENV });
    expect([nodeEnv(), nodeEnv('development'), nodeEnv('production')]).toEqual([true, true, false]);
    const out: string[] = [];
    consoleLogger((line) => out.push(line)).info?.('refused', { field: 'a b', rule: 'enum', empty: '' });
    expect(out).toEqual(['payment-gateway: refused field="a b" rule=enum']);
    // The server's own faults say their level, so that they stand out among the refusals.
    const logger = consoleLogger((line) => out.push(line));
    logger.warn('unknown fields ignored', { fields: 'x' });
    logger.error('handler failed', { operation: 'processCard' });
    expect(out.slice(1)).toEqual([
      'payment-gateway: WARN unknown fields ignored fields=x',
      'payment-gateway: ERROR handler failed operation=processCard',
    ]);
  });

  // process.stderr is made when first read (a stream over the descriptor): a production server, which
  // logs only its own faults, does not make it at its start, only when it first has a line to write.
  it('takes process.stderr when the console logger first writes, not when the server is made', () => {
    const real = Object.getOwnPropertyDescriptor(process, 'stderr')!;
    const stream = process.stderr;
    const lines: string[] = [];
    let reads = 0;
    const original = stream.write;
    Object.defineProperty(process, 'stderr', {
      configurable: true,
      enumerable: real.enumerable === true,
      get: () => {
        reads++;
        return stream;
      },
    });
    stream.write = ((chunk: unknown) => lines.push(String(chunk)) > 0) as typeof stream.write;
    const nodeEnv = process.env.NODE_ENV;
    try {
      // A server made as a production program makes it (the gateway's logger and the adapter's, chosen
      // by NODE_ENV), and a development one's logger.
      process.env.NODE_ENV = 'production';
      createNodeServer(createGateway({ handlers: echoHandlers(), accounts })).close();
      restore('NODE_ENV', nodeEnv);
      const logger = chooseLogger(undefined, { NODE_ENV: 'production' });
      chooseLogger(undefined, { NODE_ENV: 'development' });
      expect(reads).toBe(0);
      logger.warn('not logged in production', {});
      expect(reads).toBe(0);
      logger.error('handler failed', { operation: 'processCard' });
      logger.error('handler failed', { operation: 'queryCard' });
      expect(reads).toBe(1);
    } finally {
      restore('NODE_ENV', nodeEnv);
      stream.write = original;
      Object.defineProperty(process, 'stderr', real);
    }
    expect(lines).toEqual([
      'payment-gateway: ERROR handler failed operation=processCard\n',
      'payment-gateway: ERROR handler failed operation=queryCard\n',
    ]);
  });
});

// Day one of a client team: the packed tarball installed into an empty folder with npm, then every
// bin and every subcommand it declares run from node_modules/.bin as a user would: --help, --version,
// a mistake, and a short real use of each (a sandbox that answers a signed request, the contract suite against it, a
// hash checked against node:crypto, the docs, the mock with and without its optional Prism).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, childrenOf, ended } from '../support/children.ts';
import { ROOT } from '../support/contract.ts';
import { followLinks } from '../support/links.ts';
import { packed } from '../support/packed.ts';
import { tsc } from '../support/tsc.ts';
import { until } from '../support/until.ts';

const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
const bins = Object.keys(pkg.bin) as string[];
// The bins' `#!/usr/bin/env node` finds the Node these tests run on, as a user's PATH would.
const env = {
  ...process.env,
  PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
  NODE_ENV: '',
};

let tmp: string;
let app: string;
const bin = (name: string) => path.join(app, 'node_modules', '.bin', name);
const run = (name: string, args: string[], input?: string) => {
  const r = spawnSync(bin(name), args, {
    cwd: app,
    env,
    encoding: 'utf8',
    timeout: 60_000,
    ...(input !== undefined ? { input } : {}),
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

/** run(), without blocking this process: for a command that calls back an endpoint this test serves. */
function runAsync(name: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(bin(name), args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c));
  child.stderr!.on('data', (c: Buffer) => (err += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

const started: ChildProcess[] = [];
const endpoints: http.Server[] = [];
/** A merchant's notification endpoint on the loopback: answers each POST as `answer` says. */
async function localEndpoint(answer: (body: string) => [number, string]): Promise<string> {
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const [status, text] = answer(body);
    res.writeHead(status).end(text);
  });
  endpoints.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}
/** Starts a long-running bin and resolves with the first URL it prints once it says it is ready. */
function serve(
  name: string,
  args: string[],
  ready: RegExp,
): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const child = spawn(bin(name), args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const m = ready.exec(output);
      if (m) resolve({ url: m[1]!, child, output: () => output });
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}: ${output}`)));
  });
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'pgw-install-'));
  app = path.join(tmp, 'app');
  await mkdir(app);
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'client-app', private: true }));
  const { tarball } = await packed();
  // A real install: npm resolves the package's dependencies itself (from its cache when offline).
  const installed = spawnSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], {
    cwd: app,
    encoding: 'utf8',
  });
  expect(installed.status, installed.stderr).toBe(0);
}, 300_000);

afterAll(async () => {
  await Promise.all(started.map((child) => ended(child)));
  for (const server of endpoints) server.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('every bin of the installed package', () => {
  it('declares the unified command and the aliases', () => {
    expect(bins.sort()).toEqual([
      'payment-gateway',
      'payment-gateway-contract-test',
      'payment-gateway-mock',
      'payment-gateway-sandbox',
    ]);
    for (const name of bins) expect(existsSync(bin(name)), name).toBe(true);
  });

  it.each(bins)('%s --help explains itself and exits 0', (name) => {
    const r = run(name, ['--help']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: /);
  });

  it.each([
    'payment-gateway sandbox',
    'payment-gateway mock',
    'payment-gateway contract',
    'payment-gateway sign',
    'payment-gateway docs',
    'payment-gateway listen',
    'payment-gateway trigger',
    'payment-gateway deliveries',
    'payment-gateway resend',
    'payment-gateway chaos',
    'payment-gateway logs',
    'payment-gateway sandbox accounts',
    'payment-gateway sandbox accounts add',
    'payment-gateway sandbox accounts list',
    'payment-gateway sandbox accounts rotate',
    'payment-gateway-sandbox accounts add',
    'payment-gateway contract --notifications=http://127.0.0.1:9',
  ])('%s --help explains itself and exits 0', (command) => {
    const [name, ...sub] = command.split(' ');
    const r = run(name!, [...sub, '--help']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: /);
  });

  it.each([
    ...bins,
    'payment-gateway sandbox',
    'payment-gateway mock',
    'payment-gateway contract',
    'payment-gateway sign',
    'payment-gateway docs',
    'payment-gateway listen',
    'payment-gateway trigger',
    'payment-gateway deliveries',
    'payment-gateway resend',
    'payment-gateway chaos',
    'payment-gateway logs',
    'payment-gateway sandbox accounts',
    'payment-gateway sandbox accounts add',
    'payment-gateway sandbox accounts list',
    'payment-gateway sandbox accounts rotate',
  ])('%s --version prints the version', (command) => {
    const [name, ...sub] = command.split(' ');
    expect(run(name!, [...sub, '--version'])).toEqual({ code: 0, out: `${pkg.version}\n`, err: '' });
  });

  it.each([
    ['payment-gateway', ['launch']],
    ['payment-gateway', ['sandbox', '--prot', '4010']],
    ['payment-gateway-sandbox', ['--port', 'abc']],
    ['payment-gateway-mock', ['--proxy', 'not a url']],
    ['payment-gateway-contract-test', ['--bogus']],
    ['payment-gateway', ['sign', 'nope']],
    ['payment-gateway', ['listen', '--bogus']],
    ['payment-gateway', ['listen']],
    ['payment-gateway', ['trigger', '--bogus']],
    ['payment-gateway', ['trigger', 'chargeback']],
    ['payment-gateway', ['trigger']],
    ['payment-gateway', ['trigger', 'payoutTransaction', '--for', 'X', '--set', 'payoutId=PAY-1']],
    ['payment-gateway', ['trigger', 'payoutTransaction', '--for', 'X', '--set', 'result.payouts.-1.status=bounced']],
    ['payment-gateway', ['listen', '--forward-to', 'http://127.0.0.1:9/hooks', '--chaos', 'gremlins']],
    ['payment-gateway', ['listen', '--forward-to', 'http://127.0.0.1:9/hooks', '--seed', '4']],
    ['payment-gateway', ['deliveries', '--latest', '0']],
    ['payment-gateway', ['deliveries', '--bogus']],
    ['payment-gateway', ['resend']],
    ['payment-gateway', ['resend', 'abc']],
    ['payment-gateway', ['chaos', '--kinds', 'stale']],
    ['payment-gateway', ['logs', '--outcome', 'lost']],
    ['payment-gateway', ['logs', '--since', 'yesterday']],
    ['payment-gateway', ['chaos', '--notify-url', 'http://127.0.0.1:9/', '--kinds', 'duplicate=3']],
    [
      'payment-gateway',
      ['contract', '--notifications', 'http://127.0.0.1:9/hooks', '--passphrase', 'p', '--effects', 'x'],
    ],
    ['payment-gateway', ['mock', '--port', 'abc']],
    ['payment-gateway', ['contract', '--bogus']],
    ['payment-gateway', ['contract', '--notifications', 'http://127.0.0.1:9/hooks']],
    ['payment-gateway', ['docs', '--bogus']],
    ['payment-gateway', ['sandbox', 'accounts']],
    ['payment-gateway', ['sandbox', 'accounts', 'remove']],
    ['payment-gateway', ['sandbox', 'accounts', 'add', '--bogus']],
    ['payment-gateway', ['sandbox', 'accounts', 'add', '--db', 'no-such.db']],
    ['payment-gateway', ['sandbox', 'accounts', 'list', '--db', ':memory:']],
    ['payment-gateway', ['sandbox', 'accounts', 'rotate']],
    ['payment-gateway-sandbox', ['accounts', 'add', '--merchant-uuid', 'a:b']],
  ])('%s %j is refused in one line with exit 2, no stack', (name, args) => {
    const r = run(name, args);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).not.toMatch(/\n\s+at /);
  });
});

describe('the installed package is the checkout a reader was promised', () => {
  const installed = () => path.join(app, 'node_modules', 'payment-gateway-contract');

  it('every link of its README, its changelog and its guides leads to a file it holds (and a heading there)', () => {
    const links = followLinks(installed());
    expect(links.filter((l) => l.broken)).toEqual([]);
    // The README points to each guide, and each of them is there.
    const fromReadme = links.filter((l) => l.from === 'README.md' && !/^https?:/.test(l.target));
    expect(fromReadme.length).toBeGreaterThanOrEqual(10);
    expect(links.filter((l) => l.from.startsWith('docs/')).length).toBeGreaterThan(10);
  });

  it('holds every guide of the checkout (docs/*.md) and the figures they show', async () => {
    const { readdir } = await import('node:fs/promises');
    for (const name of await readdir(path.join(ROOT, 'docs'), { recursive: true }))
      if (/\.(md|png)$/.test(name)) expect(existsSync(path.join(installed(), 'docs', name)), name).toBe(true);
  });
});

describe("a client team's TypeScript", () => {
  it('compiles against every typed entry of the install, the libraries its types name checked too (skipLibCheck off)', async () => {
    // A types file that names a package the install lacks fails a consumer whose tsc checks libraries:
    // dist/runtime/document.d.ts imports openapi-types, which was a devDependency.
    const entries = Object.entries<any>(pkg.exports)
      .filter(([, target]) => typeof target === 'object' && target.types)
      .map(([sub]) => `payment-gateway-contract${sub.slice(1)}`);
    expect(entries).toContain('payment-gateway-contract/server');
    await writeFile(
      path.join(app, 'consumer.ts'),
      entries.map((entry, i) => `import * as entry${i} from '${entry}';\nvoid entry${i};\n`).join(''),
    );
    await writeFile(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          noEmit: true,
          skipLibCheck: false,
          // A Node project's own @types/node (the checkout's, as the app installed none).
          types: ['node'],
          typeRoots: [path.join(ROOT, 'node_modules/@types')],
        },
        files: ['consumer.ts'],
      }),
    );
    // `tsc -p app`, made by the run's one compiler (test/support/tsc.ts): what tsc would write, empty
    // when it finds no error (tsc then exits 0). Incremental, its state kept with the app's files named
    // as under a fixed place, so that a run re-checks only the declarations that changed since the last
    // (the app's folder is another each run; the libraries' declarations are most of the work).
    expect(
      await tsc({ project: path.join(app, 'tsconfig.json'), cache: 'install-consumer', folder: app, cwd: app }),
    ).toBe('');
  });
});

describe('a short real use of each', () => {
  const passphrase = 'sandbox-passphrase';
  const md5 = (s: string) => createHash('md5').update(s).digest('hex');

  it('payment-gateway sign: the public transaction recipe and the header HMAC, as node:crypto computes them', () => {
    const fields = { merchantUUID: '5265f8eed6a19', transactionAmount: '10.00', transactionCurrency: 'AUD' };
    const r = run('payment-gateway', [
      'sign',
      'transaction',
      ...Object.entries(fields).flatMap(([k, v]) => ['--field', `${k}=${v}`]),
    ]);
    expect(r).toEqual({
      code: 0,
      out: `${md5((md5(passphrase) + fields.merchantUUID + fields.transactionAmount + fields.transactionCurrency).toLowerCase())}\n`,
      err: '',
    });
    // The header HMAC of a GET: its path parameter, as canonical JSON, keyed by the passphrase.
    const hmac = createHmac('sha256', passphrase).update('{"batchUUID":"1336583d3a953ce2d"}').digest('hex');
    const h = run('payment-gateway', [
      'sign',
      'retrieveBatchResponse',
      '--param',
      'batchUUID=1336583d3a953ce2d',
      '--preimage',
    ]);
    expect(h.out).toBe(
      `preimage SVC-MESSAGEHASH (message): {"batchUUID":"1336583d3a953ce2d"}\nSVC-MESSAGEHASH ${hmac}\n`,
    );
  });

  describe('a sandbox started from the install', () => {
    let sandbox: Awaited<ReturnType<typeof serve>>;
    /**
     * The sandbox's control API as its default merchant (the installed spec's x-sandbox): for a step
     * whose command's output another step checks, so that the command is not started again for it.
     */
    async function control(method: string, route: string, body?: unknown): Promise<any> {
      const spec = JSON.parse(
        await readFile(path.join(app, 'node_modules', 'payment-gateway-contract', 'generated', 'openapi.json'), 'utf8'),
      );
      const { merchantUUID, apiKey } = spec.info['x-sandbox'];
      const answer = await fetch(`${sandbox.url}/_sandbox${route}`, {
        method,
        headers: {
          authorization: `Basic ${btoa(`${merchantUUID}:${apiKey}`)}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const data = await answer.json();
      expect([answer.status, data.responseCode], JSON.stringify(data)).toEqual([200, 0]);
      return data;
    }
    /**
     * `payment-gateway trigger payoutTransaction`, started once: the listen test checks what it prints,
     * and the test after it takes the payout it made, where it started the same command again for it.
     */
    let payoutTriggered: ReturnType<typeof runAsync> | undefined;
    const triggerPayout = () =>
      (payoutTriggered ??= runAsync('payment-gateway', ['trigger', 'payoutTransaction', '--base', sandbox.url]));
    beforeAll(async () => {
      sandbox = await serve(
        'payment-gateway',
        ['sandbox', '--port', '0', '--db', path.join(tmp, 'sandbox.db')],
        /sandbox on (http:\/\/\S+)/,
      );
    }, 60_000);

    it('names guides in its banner where the install has them', () => {
      const named = [...sandbox.output().matchAll(/see (\S+\.md)/g)].map((m) => m[1]!);
      expect(named.length).toBeGreaterThan(0);
      for (const guide of named) expect(existsSync(path.resolve(app, guide)), guide).toBe(true);
    });

    it("payment-gateway sandbox accounts adds a team's merchant to its database, which the sandbox serves at once", async () => {
      const db = path.join(tmp, 'sandbox.db');
      const made = run('payment-gateway', ['sandbox', 'accounts', 'add', '--db', db, '--json']);
      expect(made.err).toBe('');
      expect(made.code).toBe(0);
      const team = JSON.parse(made.out) as { merchantUUID: string; apiKey: string };
      const clock = await fetch(`${sandbox.url}/_sandbox/clock`, {
        headers: { authorization: `Basic ${btoa(`${team.merchantUUID}:${team.apiKey}`)}` },
      });
      expect(await clock.json()).toMatchObject({ responseCode: 0 });
      const listed = run('payment-gateway', ['sandbox', 'accounts', 'list', '--db', db]);
      expect(listed.code, listed.err).toBe(0);
      expect(listed.out).toContain(team.merchantUUID);
      expect(listed.out).not.toContain(team.apiKey);
    });

    it('sends a browser from / to the docs', async () => {
      const root = await fetch(sandbox.url, { redirect: 'manual' });
      expect([root.status, root.headers.get('location')]).toEqual([302, '/docs']);
      expect(await (await fetch(`${sandbox.url}/docs`)).text()).toContain('<html');
    });

    it('approves a purchase signed by payment-gateway sign --signed-body, and logs it in one line', async () => {
      const spec = JSON.parse(
        await readFile(path.join(app, 'node_modules', 'payment-gateway-contract', 'generated', 'openapi.json'), 'utf8'),
      );
      // The spec's own example, unsigned: sign fills in method and hash.
      const { method: _m, hash: _h, ...body } = spec.components.examples.processCard.value;
      const signed = run(
        'payment-gateway',
        ['sign', 'processCard', '--body', '-', '--signed-body'],
        JSON.stringify(body),
      );
      expect(signed.code, signed.err).toBe(0);
      const answer = await (
        await fetch(`${sandbox.url}/post`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'SVC-API-VERSION': '2.0' },
          body: signed.out,
        })
      ).json();
      expect(answer, JSON.stringify(answer)).toMatchObject({ responseCode: '0' });
      // A wrong passphrase: -1 to the caller; the log names the hash and its recipe, not a secret.
      const wrong = run('payment-gateway', [
        'sign',
        'processCard',
        '--passphrase',
        'not-it',
        '--body',
        JSON.stringify(body),
        '--signed-body',
      ]).out;
      const refused = await (
        await fetch(`${sandbox.url}/post`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'SVC-API-VERSION': '2.0' },
          body: wrong,
        })
      ).json();
      expect(refused).toEqual({ responseCode: '-1', responseMessage: 'Invalid authentication credentials' });
      // Each request's log line is printed after its answer is sent.
      await until(() => / processCard -1 /.test(sandbox.output()), 10_000);
      const lines = sandbox.output().split('\n');
      expect(lines.some((l) => / POST \/post processCard processCard 0 /.test(l))).toBe(true);
      const denied = lines.find((l) => / processCard -1 /.test(l));
      expect(denied).toContain("'hash' does not match recipe 'transaction'");
      expect(denied).not.toContain('not-it');
      // The card number is in the request, never in the log.
      expect(lines.filter((l) => l.includes(' POST ')).join('\n')).not.toContain('4564710000000004');
    });

    it('payment-gateway contract (and its alias) holds it to the contract', () => {
      for (const [name, args] of [
        ['payment-gateway', ['contract']],
        ['payment-gateway-contract-test', []],
      ] as const) {
        const r = run(name, [
          ...args,
          '--base-url',
          sandbox.url,
          '--only',
          'getAccessToken',
          '--quiet',
          '--junit',
          path.join(tmp, 'c.xml'),
          '--json',
          path.join(tmp, 'c.json'),
        ]);
        expect(r.code, r.out + r.err).toBe(0);
        expect(r.out).toMatch(/passed/);
      }
    }, 120_000);

    it('payment-gateway trigger makes the sandbox notify; payment-gateway listen forwards it to a local endpoint', async () => {
      const received: string[] = [];
      const hooks = await localEndpoint((body) => {
        received.push(body);
        return [200, 'handled'];
      });
      const listen = spawn(
        bin('payment-gateway'),
        ['listen', '--forward-to', hooks, '--base', sandbox.url, '--count', '1'],
        {
          cwd: app,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      started.push(listen);
      let out = '';
      listen.stdout!.on('data', (c: Buffer) => (out += c));
      listen.stderr!.on('data', (c: Buffer) => (out += c));
      const exited = new Promise<number | null>((r) => listen.on('exit', r));
      await until(() => out.includes('Forwarding') || listen.exitCode !== null, 30_000);
      const trigger = await triggerPayout();
      expect(trigger.err).toBe('');
      expect(trigger.out).toMatch(
        /^payoutTransaction: createPayouts TRIG-\w+ to BSB 802950 account 123321; its attempts ended at once through the control API -> responseCode 0/,
      );
      expect(await exited, out).toBe(0);
      expect(out).toMatch(/\n#\d+ payoutTransaction .* -> POST http:\/\/127\.0\.0\.1:\d+\/hooks -> 200 OK handled /);
      expect(JSON.parse(received[0]!)).toMatchObject({ event: 'payoutTransaction' });
    }, 60_000);

    it('payment-gateway trigger --for, deliveries, resend, chaos and listen --chaos work from the install', async () => {
      const received: string[] = [];
      const hooks = await localEndpoint((body) => {
        received.push(body);
        return [200, 'handled'];
      });
      const reference = /createPayouts (TRIG-\w+)/.exec((await triggerPayout()).out)![1]!;
      // listen under chaos: every notification repeated; a summary, and exit 0 (the endpoint acknowledged each).
      const listen = spawn(
        bin('payment-gateway'),
        [
          'listen',
          '--forward-to',
          hooks,
          '--base',
          sandbox.url,
          '--count',
          '1',
          '--chaos',
          'duplicate=1',
          '--seed',
          '5',
        ],
        { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      started.push(listen);
      let out = '';
      listen.stdout!.on('data', (c: Buffer) => (out += c));
      listen.stderr!.on('data', (c: Buffer) => (out += c));
      const exited = new Promise<number | null>((r) => listen.on('exit', r));
      await until(() => out.includes('Forwarding') || listen.exitCode !== null, 30_000);
      const triggered = await runAsync('payment-gateway', [
        'trigger',
        'payoutReturned',
        '--for',
        reference,
        '--notify-url',
        hooks,
        '--base',
        sandbox.url,
      ]);
      expect(triggered).toMatchObject({ code: 0, err: '' });
      expect(triggered.out).toMatch(
        new RegExp(
          `^payoutReturned for ${reference}: queued delivery #(\\d+) \\(payoutTransaction \\S+, result\\.payouts\\.-1\\.status=returned\\) to ${hooks}\n$`,
        ),
      );
      expect(await exited, out).toBe(0);
      expect(out).toMatch(/\n#\d+ \[duplicate\] payoutTransaction \(payoutReturned\) .* -> 200 OK handled /);
      expect(out).toMatch(/\nChaos summary \(seed 5; duplicate=1\): 1 notification, 2 posts\n/);
      const id = /queued delivery #(\d+)/.exec(triggered.out)![1]!;
      const listed = await runAsync('payment-gateway', ['deliveries', '--latest', '1', '--base', sandbox.url]);
      expect(listed.out).toMatch(
        new RegExp(`^#${id} payoutTransaction \\(payoutReturned\\) \\S+ -> ${hooks}: delivered; 200 at `),
      );
      const resent = await runAsync('payment-gateway', ['resend', id, '--base', sandbox.url]);
      expect(resent).toMatchObject({ code: 0, err: '' });
      expect(resent.out).toMatch(
        new RegExp(`^#\\d+ payoutTransaction \\(payoutReturned\\) \\S+ \\(resent #${id}\\) -> ${hooks}: `),
      );
      const chaos = await runAsync('payment-gateway', [
        'chaos',
        '--notify-url',
        hooks,
        '--kinds',
        'stale=1',
        '--seed',
        '9',
        '--base',
        sandbox.url,
      ]);
      expect(chaos.out).toBe(`Chaos on for ${hooks}: stale=1; seed 9 (--seed 9 repeats it)\n`);
      // Sent again under chaos (resend was checked above): through the control API, as the command sends it.
      await control('POST', `/deliveries/${id}/resend`, {});
      // The endpoint here takes anything: the stale copy the sandbox sent is named, exit 1. Waited for
      // through the control API (what the command prints), then the command run once.
      expect(
        await until(
          async () =>
            (await control('GET', '/chaos')).chaos.some((r: { summary: string[] }) =>
              r.summary.join('\n').includes('1 problem'),
            ),
          20_000,
          100,
        ),
      ).toBe(true);
      const problems = await runAsync('payment-gateway', ['chaos', '--base', sandbox.url]);
      expect([problems.code, problems.err]).toEqual([1, '']);
      expect(problems.out).toContain('1 problem');
      const shown = await runAsync('payment-gateway', ['chaos', '--off', hooks, '--base', sandbox.url]);
      expect(shown.out).toContain('a stale copy (a replay) taken as real (answered 200, expected 4xx)');
    }, 120_000);

    it('payment-gateway contract --notifications checks an endpoint and says why each check failed', async () => {
      // An endpoint that refuses everything, with its reason: the valid deliveries fail, naming it.
      const hooks = await localEndpoint(() => [400, 'refused: not today']);
      const r = await runAsync('payment-gateway', [
        'contract',
        '--notifications',
        hooks,
        '--passphrase',
        'sandbox-passphrase',
      ]);
      expect(r.err).toBe('');
      expect(r.code).toBe(1);
      expect(r.out).toContain(
        'FAIL  payoutTransaction: a valid notification is acknowledged (expected 2xx, got 400: refused: not today)',
      );
      expect(r.out).toMatch(/\n\d+ passed, \d+ failed\n$/);
    }, 60_000);

    it('a second sandbox on the same port is refused in one line', () => {
      const port = new URL(sandbox.url).port;
      const r = run('payment-gateway-sandbox', ['--port', port, '--db', ':memory:']);
      expect(r.code).toBe(2);
      expect(r.err).toBe(
        `payment-gateway-sandbox: port ${port} is in use: stop what listens there, or choose another with --port (0 picks a free one)\n`,
      );
    });
  });

  it('payment-gateway docs serves the reference, and --path says where the file is', async () => {
    const file = run('payment-gateway', ['docs', '--path']).out.trim();
    expect(existsSync(file)).toBe(true);
    const docs = await serve('payment-gateway', ['docs', '--port', '0'], /reference on (http:\/\/\S+)\//);
    // The page as the file has it, with the sandbox its try-it console sends to named in its head.
    const served = await (await fetch(docs.url)).text();
    const meta = /<meta name="pgw-try-it-sandbox" content="([^"]+)">/.exec(served);
    expect(meta?.[1]).toBe(process.env.PGW_SANDBOX_URL || 'http://localhost:4010');
    expect(served.replace(meta![0], '')).toBe(await readFile(file, 'utf8'));
  }, 30_000);

  it('the mock without Prism says what to install; with Prism it answers', async () => {
    const missing = run('payment-gateway-mock', ['--port', '0']);
    expect(missing.code).toBe(2);
    expect(missing.err).toBe(
      'payment-gateway-mock: the mock runs Prism, which is not installed: npm install --save-dev @stoplight/prism-cli@5.16.0\n',
    );
    // The optional peer, as a team that installs it has it.
    await mkdir(path.join(app, 'node_modules', '@stoplight'), { recursive: true });
    await symlink(
      path.join(ROOT, 'node_modules', '@stoplight', 'prism-cli'),
      path.join(app, 'node_modules', '@stoplight', 'prism-cli'),
    );
    const mock = await serve('payment-gateway', ['mock', '--port', '0'], /mock ready at (http:\/\/\S+)/);
    const spec = JSON.parse(
      await readFile(path.join(app, 'node_modules', 'payment-gateway-contract', 'generated', 'openapi.json'), 'utf8'),
    );
    const answer = await fetch(`${mock.url}/post`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'SVC-API-VERSION': '2.0' },
      body: JSON.stringify(spec.components.examples.processCapture.value),
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual(spec.components.examples.processCaptureApproved.value);
    // Its port taken: one line, and no Prism started for nothing.
    const port = new URL(mock.url).port;
    const taken = run('payment-gateway-mock', ['--port', port]);
    expect([taken.code, taken.err]).toEqual([
      2,
      `payment-gateway-mock: port ${port} is in use: stop what listens there, or choose another with --port (0 picks a free one)\n`,
    ]);
    expect(taken.out).toBe('');
    // Stopped as a supervisor stops it, its Prism goes with it (an orphaned Prism keeps its port).
    const prisms = childrenOf(mock.child.pid!);
    expect(prisms).toHaveLength(1);
    await ended(mock.child);
    expect(await until(() => prisms.every((pid) => !alive(pid)), 10_000)).toBe(true);
  }, 60_000);
});

// Finding: the contract suite, as a client, trusted the server it tests. It followed redirects (its
// signed bodies and keys re-sent wherever a server pointed), read answers without a limit (an
// endless answer cost gigabytes), had no deadline (a silent server cost most of an hour: 15 s per
// request, every request) and ended with a stack trace when a server dropped its connections. The
// suite now talks through runtime/bounded-fetch.ts: no redirect followed, each answer capped, each
// exchange timed out, a deadline for the run, and after a few exchanges in a row without an answer it
// stops, in one line. Each hostile server here is started by the test, on loopback; the suite runs as
// its own process, as a user runs it.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCardNumber } from '../../runtime/card-numbers.ts';
import { ROOT } from '../support/contract.ts';

type Mode = 'redirect' | 'endless' | 'silent' | 'dripping' | 'dropping' | 'hostile-content' | 'mute';
/** The modes that never give an answer: the suite must wait each request out. */
const NO_ANSWER: readonly Mode[] = ['silent', 'dripping', 'dropping', 'mute'];

const SPEC = readFileSync(path.join(ROOT, 'generated/openapi.json'));
const HOSTILE_TEXT = 'Approved 4564 7100 0000 0004\u001b[2J\u001b]0;owned\u0007\nforged line \u2028\ud800 ]]> \u0000';

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-hostile-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every request that reached a catcher, in any test: a redirect followed. None, in the file's end too. */
const allCaught: string[] = [];
afterAll(() => expect(allCaught).toEqual([]));

async function listening(server: http.Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return (server.address() as AddressInfo).port;
}

/**
 * A hostile server in one mode, and a catcher where its redirects point (it must never be reached):
 * each test has its own, so the tests run side by side and the time-outs they wait out overlap.
 */
async function hostileServer(mode: Mode) {
  /** What the hostile server saw: requests, and the most bytes it wrote on one answer. */
  const seen = { requests: 0, mostWritten: 0 };
  const caught: string[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const catcher = http.createServer((req, res) => {
    caught.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
    res.end('{}');
  });
  const catcherPort = await listening(catcher);
  const hostile = http.createServer((req, res) => {
    if (mode === 'mute') return;
    if (req.url === '/openapi.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end(SPEC);
    seen.requests++;
    req.resume();
    let written = 0;
    const count = (n: number) => {
      written += n;
      seen.mostWritten = Math.max(seen.mostWritten, written);
    };
    switch (mode) {
      case 'redirect': {
        const status = [301, 302, 303, 307, 308][seen.requests % 5]!;
        res.writeHead(status, { location: `http://127.0.0.1:${catcherPort}/stolen${req.url}` }).end();
        return;
      }
      case 'endless': {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 'a');
        res.write('{"responseCode":"0","responseMessage":"');
        const pump = () => {
          while (!res.destroyed && written < 512 * 1024 * 1024) {
            count(chunk.length);
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
        return;
      }
      case 'silent':
        return;
      case 'dripping': {
        res.writeHead(200, { 'content-type': 'application/json' });
        const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(' ')), 100);
        res.on('close', () => clearInterval(drip));
        return;
      }
      case 'dropping':
        return void req.socket.destroy();
      case 'hostile-content': {
        const body = JSON.stringify({
          responseCode: '-2',
          responseMessage: HOSTILE_TEXT,
          accessToken: '4564-7100-0000-0004',
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
        return;
      }
    }
  });
  hostile.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const base = `http://127.0.0.1:${await listening(hostile)}`;
  let runs = 0;
  // A time-out of 1 s where the server never finishes an answer (waiting it out is what is tested);
  // elsewhere the server answers at once, and a short time-out would only test the machine's load.
  const timeout = NO_ANSWER.includes(mode) ? '1' : '30';

  /** The suite against the hostile server, as a user runs it: its exit code and what it printed. */
  const suite = (
    extra: string[] = [],
  ): Promise<{ code: number; stdout: string; stderr: string; json: string; xml: string }> => {
    seen.requests = 0;
    seen.mostWritten = 0;
    const json = path.join(dir, `${mode}-${++runs}.json`);
    const xml = path.join(dir, `${mode}-${runs}.xml`);
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [
          'contract/run.ts',
          '--base-url',
          base,
          '--only',
          'processCard,getAccessToken',
          '--json',
          json,
          '--junit',
          xml,
          '--timeout',
          timeout,
          ...extra,
        ],
        { cwd: ROOT, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const read = (f: string) => {
            try {
              return readFileSync(f, 'utf8');
            } catch {
              return '';
            }
          };
          resolve({
            code: (error as { code?: number } | null)?.code ?? 0,
            stdout,
            stderr,
            json: read(json),
            xml: read(xml),
          });
        },
      );
    });
  };
  const close = () => {
    for (const s of sockets) s.destroy();
    hostile.close();
    catcher.close();
    allCaught.push(...caught);
  };
  return { seen, caught, suite, close };
}

/** A test against its own hostile server in `mode`, closed after it. */
const against =
  (mode: Mode, test: (server: Awaited<ReturnType<typeof hostileServer>>) => Promise<void>) => async () => {
    const server = await hostileServer(mode);
    try {
      await test(server);
    } finally {
      server.close();
    }
  };

/** No stack trace: no line of the form "    at fn (file:line)", no Node crash banner. */
const expectNoStack = (text: string) => {
  expect(text, text).not.toMatch(/^\s+at .+[:(]\d+/m);
  expect(text, text).not.toMatch(/^Node\.js v\d+/m);
};

describe.concurrent('the contract suite against a hostile server', () => {
  it(
    'never follows a redirect: its signed bodies and keys go to the server it was given only',
    against('redirect', async ({ seen, caught, suite }) => {
      // The credentials' first request is answered with a redirect: the run ends there, in one line.
      const proving = await suite();
      expect(caught, caught.join('\n')).toEqual([]);
      expect(proving.code).toBe(2);
      expect(proving.stderr.trim().split('\n')).toHaveLength(1);
      expect(proving.stderr).toMatch(/HTTP 30[12378]/);
      expectNoStack(proving.stdout + proving.stderr);
      // Every check's request answered with a redirect (--mock: no credentials proved first).
      const checking = await suite(['--mock']);
      expect(caught, caught.join('\n')).toEqual([]);
      expect(seen.requests).toBeGreaterThan(3);
      expect(checking.code).toBe(1);
      expect(checking.stdout).toMatch(/HTTP 30[12378]/);
      expectNoStack(checking.stdout + checking.stderr);
    }),
  );

  it(
    'reads at most its cap of an endless answer, then stops the run in one line',
    against('endless', async ({ seen, suite }) => {
      const run = await suite(['--max-answer-bytes', String(1024 * 1024)]);
      expect(run.code).not.toBe(0);
      expectNoStack(run.stdout + run.stderr);
      // What the server got written is the cap and what the sockets' buffers hold, not the endless rest.
      expect(seen.mostWritten).toBeLessThan(32 * 1024 * 1024);
      expect(seen.requests).toBeLessThan(20);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(/^payment-gateway-contract-test: .*passed 1048576 bytes/);
    }),
  );

  for (const m of ['silent', 'dripping', 'dropping'] as const)
    it(
      `stops in one line when a server gives no answer (${m}), proving credentials or running checks`,
      against(m, async ({ seen, suite }) => {
        const checking = await suite(['--mock']);
        expect(checking.code).toBe(1);
        expectNoStack(checking.stdout + checking.stderr);
        expect(checking.stderr.trim().split('\n'), checking.stderr).toHaveLength(1);
        expect(checking.stderr).toMatch(
          /^payment-gateway-contract-test: stopped after .*gave up after \d+ exchanges in a row/,
        );
        expect(seen.requests).toBeLessThan(20);
        expect(
          JSON.parse(checking.json).results.some((r: { reason?: string }) => r.reason?.startsWith('not sent')),
        ).toBe(true);
        const run = await suite();
        expect(run.code).not.toBe(0);
        expectNoStack(run.stdout + run.stderr);
        expect(run.stderr.trim().split('\n'), run.stderr).toHaveLength(1);
        expect(run.stderr).toMatch(/^payment-gateway-contract-test: /);
        // A few exchanges, not one time-out for every request of the run.
        expect(seen.requests).toBeLessThan(20);
      }),
    );

  it(
    'ends in one line when nothing answers at all',
    against('mute', async ({ suite }) => {
      const run = await suite();
      expect(run.code).toBe(2);
      expectNoStack(run.stdout + run.stderr);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }),
  );

  it(
    'keeps an overall deadline',
    against('dripping', async ({ suite }) => {
      const run = await suite(['--timeout', '30', '--deadline', '2']);
      expect(run.code).not.toBe(0);
      expectNoStack(run.stdout + run.stderr);
      expect(run.stderr).toMatch(/deadline/);
    }),
  );

  it(
    'an answer holding card numbers and control characters leaves none in the console or the reports',
    against('hostile-content', async ({ suite }) => {
      const run = await suite(['--allow-unreached']);
      for (const text of [run.stdout, run.stderr, run.json, run.xml]) {
        expect(findCardNumber(text), text.slice(0, 2000)).toBe(false);
        expect(/[\u2028\ud800]|(?![\t\n\r])\p{Cc}/u.test(text), text.slice(0, 2000)).toBe(false);
      }
      expect(XMLValidator.validate(run.xml)).toBe(true);
      expectNoStack(run.stdout + run.stderr);
    }),
  );
});

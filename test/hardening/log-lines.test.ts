// Finding: text a caller controls (the body's `method`, the path, an unknown field's name, a header's
// value) reached the sandbox's and the mock's log lines raw, credentials or none: card numbers in any
// spelling, forged lines (a newline and a line of one's own), terminal escape sequences. One writer now
// writes every component's lines (runtime/log-line.ts): card numbers masked in any spelling, every
// control, line-separator, bidirectional and non-text character escaped visibly. Held here, for any
// hostile text, on each component as it runs: the stubs' console log, the sandbox's request log and
// warnings (its own process, as npm start runs it), the mock's lines (Prism behind its front).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { mockLog, startMock } from '../../mock/run.ts';
import { sharedPrism } from '../support/shared-servers.ts';
import { findCardNumber } from '../../runtime/card-numbers.ts';
import { logWriter } from '../../runtime/log-line.ts';
import { consoleLogger } from '../../server-stubs/core/log.ts';
import { createGateway } from '../../server-stubs/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';
import { startSandboxProcess, type SandboxProcess } from '../support/sandbox-process.ts';
import { until } from '../support/until.ts';
import { cardNumber, disguised } from './disguises.ts';
import { purchase, signed } from './support.ts';

/** What a caller can put in a log line: card numbers in disguise, line ends, escape sequences, controls. */
const piece = fc.oneof(
  { weight: 3, arbitrary: disguised },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom('', 'ref', '0x', 'id-'), cardNumber).map(([a, b]) => a + b) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '\n',
      '\r\n',
      '\r',
      '\u2028',
      '\u2029',
      '\u0085',
      '\x1b[31m',
      '\x1b]0;owned\x07',
      '\x1b[2J\x1b[H',
      '\u009b31m',
      '\u202e',
      '\u2066',
      '\x00',
      '\x7f',
      '\x08\x08\x08',
      '\ud800',
      '\udfff',
      '\ufffe',
      '\\n',
      '\n12:00:00.000 POST /post processCard processCard 0 1.0ms',
      '\npayment-gateway: WARN forged',
    ),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);
const hostile = fc.array(piece, { minLength: 1, maxLength: 4 }).map((parts) => parts.join(''));

/** A path segment of any text: its UTF-8 bytes, percent-encoded but for the unreserved characters. */
const segment = (text: string) =>
  [...Buffer.from(text, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`,
    )
    .join('');

/** What no written line may hold: a control character but its end, a line separator, a bidi control, a non-character. */
const UNSAFE = /[\p{Cc}\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufffe\uffff]|\p{Cs}/u;

/** Each line written, checked: safe, and no card number in any spelling. */
function expectSafe(lines: string[], what: string): void {
  for (const line of lines) {
    expect(UNSAFE.test(line), `${what}: ${JSON.stringify(line)}`).toBe(false);
    expect(findCardNumber(line), `${what}: ${JSON.stringify(line)}`).toBe(false);
  }
}

/** A sink that keeps what is written, split at line ends (a forged line would show as one more). */
function sink() {
  const written: string[] = [];
  return {
    written,
    write: (text: string) => void written.push(text),
    lines: () => written.join('').split('\n').slice(0, -1),
  };
}

describe('log lines hold no card number and no control character, whatever a caller sends', () => {
  it('the writer: one line, nothing unsafe, no card number, for any text', () => {
    const digitsAndMore = fc
      .array(fc.oneof(fc.constantFrom(...'0123456789 -.:X\t\n'), fc.string({ maxLength: 2 })), { maxLength: 60 })
      .map((p) => p.join(''));
    fc.assert(
      fc.property(fc.oneof(hostile, digitsAndMore, fc.string({ unit: 'binary' })), (text) => {
        const out = sink();
        logWriter(out)(text);
        expect(out.lines(), JSON.stringify(text)).toHaveLength(1);
        expectSafe(out.lines(), 'writer');
      }),
      { seed: 3917, numRuns: 5000 },
    );
  });

  it('the stubs console log: one line per entry', async () => {
    const out = sink();
    const gateway = createGateway({
      accounts,
      handlers: echoHandlers(),
      logger: consoleLogger((line) => out.write(`${line}\n`)),
      unknownFields: 'ignore',
    });
    const op = operation('processCard');
    const example = requestExamples(op)[0]!.value as Record<string, unknown>;
    await fc.assert(
      fc.asyncProperty(hostile, hostile, async (method, name) => {
        out.written.length = 0;
        await gateway.handle(buildRequest(op, { body: { ...example, method } }));
        await gateway.handle(buildRequest(op, { body: { ...example, [name]: 'x' } }));
        const lines = out.lines();
        expect(lines.length, JSON.stringify(lines)).toBe(out.written.length);
        expectSafe(lines, 'stubs');
      }),
      { seed: 3911, numRuns: 300 },
    );
  });

  describe('the sandbox, as npm start runs it', () => {
    let sandbox: SandboxProcess;
    let stdout = '';
    let stderr = '';
    beforeAll(async () => {
      sandbox = await startSandboxProcess({ PGW_DB: ':memory:' });
      sandbox.child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      sandbox.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    });
    afterAll(() => sandbox?.child.kill('SIGKILL'));

    const send = (url: string, headers: Record<string, string>, body: string) =>
      fetch(`${sandbox.base}${url}`, { method: 'POST', headers, body }).then((r) => r.arrayBuffer());

    it('its request log: one line per request, in any part of it', async () => {
      await fc.assert(
        fc.asyncProperty(hostile, hostile, hostile, async (method, path, field) => {
          const before = stdout.length;
          const card = signed('processCard', purchase());
          const headers = card.headers as Record<string, string>;
          await send('/post', headers, JSON.stringify({ ...purchase(), method }));
          await send(`/post/${segment(path)}`, headers, String(card.body));
          await send(`/${segment(path)}`, headers, '{}');
          await send('/post', headers, JSON.stringify({ ...purchase(), [field]: '1' }));
          // The merchant's identifier as a header of the header-credential operations.
          await send('/npp/payid', { ...headers, 'SVC-MERCHANTID': field.replace(/[^\x20-\x7e]/g, '') || 'x' }, '{}');
          await until(() => stdout.slice(before).split('\n').length - 1 >= 5, 10_000);
          const lines = stdout.slice(before).split('\n').slice(0, -1);
          expect(lines.length, JSON.stringify(lines)).toBe(5);
          for (const line of lines) expect(line).toMatch(/^\d{2}:\d{2}:\d{2}\.\d{3} POST /);
          expectSafe(lines, 'request log');
        }),
        { seed: 3912, numRuns: 60 },
      );
      expectSafe(stderr.split('\n'), 'sandbox stderr');
    });
  });

  describe('the mock (Prism behind its front)', () => {
    const out = sink();
    let mock: Awaited<ReturnType<typeof startMock>>;
    beforeAll(async () => {
      mock = await startMock({ port: 0, host: '127.0.0.1', ...mockLog(out), prism: await sharedPrism() });
    });
    afterAll(() => mock?.close());

    it('its lines: one per refusal, in any part of the request', async () => {
      const op = operation('processCapture');
      const example = requestExamples(op)[0]!.value as Record<string, unknown>;
      await fc.assert(
        fc.asyncProperty(hostile, hostile, hostile, async (method, field, path) => {
          out.written.length = 0;
          for (const [body, url] of [
            [{ ...example, method }, '/post'],
            [{ ...example, [field]: 'x' }, '/post'],
            [example, `/post/${segment(path)}`],
          ] as const) {
            const request = buildRequest(op, { body });
            await fetch(mock.url + url, {
              method: request.verb,
              headers: request.headers as Record<string, string>,
              body: request.body as string,
            }).then((r) => r.arrayBuffer());
          }
          const lines = out.lines();
          expect(lines.length, JSON.stringify(lines)).toBe(out.written.length);
          expectSafe(lines, 'mock');
        }),
        { seed: 3913, numRuns: 100 },
      );
    });
  });
});

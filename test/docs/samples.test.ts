// Every operation's curl sample in the docs, run against a started sandbox as a reader would paste
// it (with `payment-gateway` on the PATH): the sample must be authenticated and complete, so that no
// header name or credential in the docs can drift from the contract again (the payout samples once
// sent SVC-APIKEY where the payout paths read SVC-API-KEY, and got -3).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XMLParser } from 'fast-xml-parser';
import { protocols } from '../../generated/protocols.ts';
import { codeSamples, samplesIn } from '../../scripts/generators/docs-view.ts';

const formSamples = (op: Parameters<typeof codeSamples>[0], d: Parameters<typeof codeSamples>[1]) =>
  samplesIn(protocols.byId('form')!, op, d);
import { ROOT, doc, operations } from '../support/contract.ts';
import { startSandbox, type TestSandbox } from '../sandbox/support.ts';

let t: TestSandbox;
let accessToken: string;
beforeAll(async () => {
  t = await startSandbox();
  // The samples carry the spec's example token; a reader gets a live one from getAccessToken first.
  ({ accessToken } = (await t.client.getAccessToken({ transactionAmount: '10.00', transactionCurrency: 'AUD' })) as {
    accessToken: string;
  });
});
afterAll(() => t.close());

/** Runs a sample in bash, `payment-gateway` being this checkout's CLI; resolves with what it printed. */
function runSample(source: string): Promise<{ code: number | null; out: string; err: string }> {
  const cli = `payment-gateway() { "${process.execPath}" "${path.join(ROOT, 'cli/main.ts')}" "$@"; }`;
  const child = spawn('bash', ['-c', `set -eo pipefail\n${cli}\n${source}`], {
    cwd: ROOT,
    env: { ...process.env, GATEWAY_URL: t.base },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  child.stderr.on('data', (c: Buffer) => (err += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

const sampled = operations.filter((op) => !op.webhook);

describe("the docs' curl samples, against the sandbox", () => {
  it.each(sampled.map((op) => [op.operationId, op] as const))(
    '%s: answered by the operation, not refused for a missing header or credential',
    async (_id, op) => {
      const curl = codeSamples(op, doc)
        .find((s) => s.label === 'curl')!
        .source.replace(/"accessToken":"\w+"/, `"accessToken":"${accessToken}"`);
      const { code, out, err } = await runSample(curl);
      expect(code, err).toBe(0);
      // getSettlement answers the zip itself.
      if (op.operationId === 'getSettlement') return expect(out.slice(0, 2)).toBe('PK');
      const answer = JSON.parse(out);
      expect(answer, out).toHaveProperty('responseCode');
      // -3: a required header or field missing; -1: the credentials or the hash did not pass; and a
      // request that did not reach the operation (a wrong verb or path) is refused as no operation.
      expect([-1, -3], `${op.operationId}: ${out}`).not.toContain(Number(answer.responseCode));
      expect(answer.responseMessage ?? '', `${op.operationId}: ${out}`).not.toMatch(/not an operation|No operation/);
    },
    30_000,
  );
});

describe("the docs' form/XML samples, against the sandbox", () => {
  const xml = new XMLParser({ parseTagValue: false });
  const root = (doc['x-wire-formats'].form as unknown as { xml: { name: string } }).xml.name;
  it.each(sampled.filter((op) => formSamples(op, doc).length).map((op) => [op.operationId, op] as const))(
    '%s: answered in XML by the operation, not refused for a missing field or credential',
    async (_id, op) => {
      const curl = formSamples(op, doc)
        .find((s) => s.label === 'curl')!
        .source.replace(/accessToken=\w+/, `accessToken=${accessToken}`);
      const { code, out, err } = await runSample(curl);
      expect(code, err).toBe(0);
      if (op.operationId === 'getSettlement') return expect(out.slice(0, 2)).toBe('PK');
      const answer = xml.parse(out)[root];
      expect(answer, out).toHaveProperty('responseCode');
      expect([-1, -3], `${op.operationId}: ${out}`).not.toContain(Number(answer.responseCode));
      expect(String(answer.responseMessage ?? ''), `${op.operationId}: ${out}`).not.toMatch(
        /not an operation|No operation/,
      );
    },
    30_000,
  );
});

// A refusal's stable code (docs/REFUSALS.md) reaches the sandbox's request log, and only the log: the
// answer stays the gateway's two fields. A business refusal's code travels from its catalogue entry
// (sandbox/refusals.ts) through the handler's answer to the log line; a validation refusal's from the stubs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { logLine } from '../../sandbox/main.ts';
import type { RequestRecord } from '../../server-stubs/index.ts';
import { startSandbox, type TestSandbox } from './support.ts';

const records: RequestRecord[] = [];
let t: TestSandbox;
beforeAll(async () => {
  t = await startSandbox({ onRequest: (r) => records.push(r) });
});
afterAll(() => t.close());

const example = (id: string) => structuredClone(requestExamples(operation(id))[0]!.value) as Record<string, unknown>;

/** Sends a signed request through the sandbox and gives its answer and its log line. */
async function sent(id: string, body: Record<string, unknown>) {
  records.length = 0;
  const request = buildRequest(operation(id), { body });
  const response = await t.sandbox.gateway.handle(request);
  expect(records).toHaveLength(1);
  return { answer: JSON.parse(String(response.body)), record: records[0]!, line: logLine(records[0]!) };
}

describe("the sandbox's request log names the refusal's code", () => {
  it('a business rule: a capture above what was authorised', async () => {
    const auth = await t.client.processAuth({ ...example('processAuth'), transactionAmount: '40.00' } as never);
    const transactionID = (auth as { transactionID: string }).transactionID;
    const { answer, record, line } = await sent('processCapture', {
      ...example('processCapture'),
      transactionID,
      captureAmount: '40.01',
    });
    expect(answer).toEqual({
      responseCode: '-2',
      responseMessage: "Field 'captureAmount' is invalid: Capture amount is greater than the transaction amount",
    });
    expect(record.errorCode).toBe('PGW_ERR_SANDBOX_CAPTURE_EXCEEDS_AUTHORISED');
    expect(line).toMatch(
      / POST \/post processCapture processCapture -2 [\d.]+ms PGW_ERR_SANDBOX_CAPTURE_EXCEEDS_AUTHORISED$/,
    );
  });

  it("a validation refusal: a required field missing, by the stubs' catalogue", async () => {
    const { transactionAmount: _, ...body } = example('processCard');
    const { answer, record, line } = await sent('processCard', body);
    expect(Object.keys(answer)).toEqual(['responseCode', 'responseMessage']);
    expect(answer.responseCode).toBe('-3');
    expect(record.errorCode).toBe('PGW_ERR_FIELD_REQUIRED');
    expect(line).toMatch(/ -3 [\d.]+ms PGW_ERR_FIELD_REQUIRED$/);
  });

  it('a credential refusal: the code, then the check that failed', async () => {
    const { line } = await sent('processCard', { ...example('processCard'), apiKey: 'wrongkey' });
    expect(line).toMatch(/ -1 [\d.]+ms PGW_ERR_CREDENTIALS {2}apiKey is not the api key/);
  });

  it('an answer that is no refusal has no code', async () => {
    const { record, line } = await sent('processCard', example('processCard'));
    expect(record.errorCode).toBeUndefined();
    expect(line).toMatch(/ 0 [\d.]+ms$/);
  });
});

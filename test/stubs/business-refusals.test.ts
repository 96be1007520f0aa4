// A server team's own business rules answer in the sandbox's words, which are the real gateway's
// where they are known: the package's server entry gives it the sandbox's catalogue of business
// refusals (spec/refusals.yaml's sandboxRefusals), so that nobody retypes "Capture amount is greater
// than the transaction amount". A team's processCapture handler on the stubs, and the sandbox, are
// sent the same over-capture: the answers and their codes are the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { createGateway, type RequestRecord, refusalFields, sandboxRefusals } from '../../server-stubs/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';
import { startSandbox, type TestSandbox } from '../sandbox/support.ts';

const example = (id: string) => structuredClone(requestExamples(operation(id))[0]!.value) as Record<string, unknown>;

let t: TestSandbox;
beforeAll(async () => {
  t = await startSandbox();
});
afterAll(() => t?.close());

describe("the sandbox's business refusals, from the package's server entry", () => {
  it("a team's handler refuses an over-capture in the sandbox's words and with its code", async () => {
    const auth = await t.client.processAuth({ ...example('processAuth'), transactionAmount: '40.00' } as never);
    const transactionID = (auth as { transactionID: string }).transactionID;
    const overCapture = buildRequest(operation('processCapture'), {
      body: { ...example('processCapture'), transactionID, captureAmount: '40.01' },
    });

    const records: RequestRecord[] = [];
    const team = createGateway({
      accounts,
      handlers: {
        ...echoHandlers(),
        // The team's rule: nothing is left of this authorisation to capture.
        processCapture: () => refusalFields('string', sandboxRefusals.captureExceedsAuthorised()),
      },
      onRequest: (record) => records.push(record),
    });
    const theirs = await team.handle(overCapture);
    const sandboxes = await t.sandbox.gateway.handle(overCapture);

    expect(JSON.parse(String(theirs.body))).toEqual(JSON.parse(String(sandboxes.body)));
    expect(JSON.parse(String(theirs.body))).toEqual({
      responseCode: '-2',
      responseMessage: "Field 'captureAmount' is invalid: Capture amount is greater than the transaction amount",
    });
    expect(records.map((r) => r.errorCode)).toEqual(['PGW_ERR_SANDBOX_CAPTURE_EXCEEDS_AUTHORISED']);
  });

  it('holds every entry of the catalogue, the numbered family among them', () => {
    expect(Object.keys(sandboxRefusals)).toContain('noSuchCard');
    expect(sandboxRefusals.numbered.entries).toBeDefined();
    expect(sandboxRefusals.noSuchCard('cardID').message).toBe("Field 'cardID' is invalid: no such card");
  });
});

// Refusals a Ruby client team met against the sandbox in the form/XML mode, each asked again from the
// outside, in both wire modes: an HTTP request, its answer read as the mode's clients read it. Each
// refusal names the field and the rule in words that say what was wrong (the refusal catalogue,
// spec/refusals.yaml; docs/REFUSALS.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { protocols } from '../../generated/protocols.ts';
import { startSandbox, type TestSandbox } from './support.ts';

let t: TestSandbox;
beforeAll(async () => {
  t = await startSandbox();
});
afterAll(() => t.close());

const WIRES = ['json', 'form'] as const;
const example = (id: string) => structuredClone(requestExamples(operation(id))[0]!.value) as Record<string, unknown>;

/** A signed request of the operation in the wire mode, its answer read as the mode's clients read it. */
async function send(id: string, body: Record<string, unknown>, wire: (typeof WIRES)[number]) {
  const r = buildRequest(operation(id), { body, signBody: true, wire });
  const response = await fetch(t.base + r.url, {
    method: r.verb,
    headers: r.headers as Record<string, string>,
    body: r.body as string,
  });
  return answerOf(response);
}

async function answerOf(response: Response): Promise<Record<string, unknown>> {
  const read = protocols.answeredIn(response.headers.get('content-type') ?? '')!.readAnswer(await response.text());
  if (!('ok' in read)) throw new Error(`unreadable answer: ${read.error}`);
  return { status: response.status, ...read.ok };
}

describe('a refund of a declined purchase', () => {
  it('is told the original was declined, not that the refund is larger than what was captured', async () => {
    // The expired test card: declined (4), nothing captured.
    const declined = await send(
      'processCard',
      {
        ...example('processCard'),
        paymentCardNumber: '4564710000000012',
        paymentCardExpiry: '0205',
        paymentCardCSC: undefined,
        transactionReferenceID: 'RUBY-DECLINED',
      },
      'json',
    );
    expect(declined.responseCode).toBe('4');
    for (const wire of WIRES)
      expect(
        await send(
          'refundCard',
          { ...example('refundCard'), transactionID: declined.transactionID, refundAmount: '1.00' },
          wire,
        ),
        wire,
      ).toMatchObject({
        status: 200,
        responseCode: '-2',
        responseMessage: "Field 'transactionID' is invalid: the transaction was declined",
      });
  });
});

describe('a negative amount', () => {
  it('is told an amount must not be negative', async () => {
    const rule = 'must be a non-negative amount with two decimals and no thousands separator, for example 10.00';
    for (const wire of WIRES) {
      expect(await send('processCard', { ...example('processCard'), transactionAmount: '-1.00' }, wire), wire).toEqual({
        status: 200,
        responseCode: '-2',
        responseMessage: `Field 'transactionAmount' is invalid: ${rule}`,
      });
      expect(await send('refundCard', { ...example('refundCard'), refundAmount: '-1.00' }, wire), wire).toEqual({
        status: 200,
        responseCode: '-2',
        responseMessage: `Field 'refundAmount' is invalid: ${rule}`,
      });
    }
  });
});

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

/** A form body as bytes, posted as a form client posts it. */
const postForm = (bytes: Uint8Array) =>
  fetch(`${t.base}/post/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: bytes,
  }).then(answerOf);
const formBytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

describe('a raw byte that is not UTF-8 in a form body', () => {
  it('is refused naming the field it is in', async () => {
    const form = buildRequest(operation('processCard'), { body: example('processCard'), signBody: true, wire: 'form' })
      .body as string;
    // Latin-1's é (0xE9), as a client that does not encode its text as UTF-8 sends José.
    const [before, after] = form.split(/customerName=[^&]*/);
    expect(await postForm(formBytes(before!, 'customerName=Jos', [0xe9], after!))).toEqual({
      status: 400,
      responseCode: '-2',
      responseMessage: "Field 'customerName' is not UTF-8",
    });
    // In a nested field's value: the field as refusals name it.
    expect(await postForm(formBytes('method=processCard&refunds[0][note]=', [0xff], '&merchantUUID=x'))).toMatchObject({
      responseCode: '-2',
      responseMessage: "Field 'refunds[0].note' is not UTF-8",
    });
    // In a field's name: no field can be named, the body is.
    expect(await postForm(formBytes('method=processCard&na', [0xe9], 'me=1'))).toMatchObject({
      responseCode: '-2',
      responseMessage: 'The request body has a field name that is not UTF-8',
    });
  });
});

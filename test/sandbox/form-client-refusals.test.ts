// Refusals a Ruby client team met against the sandbox in the form/XML mode, each asked again from the
// outside, in both wire modes: an HTTP request, its answer read as the mode's clients read it. Each
// refusal names the field and the rule in words that say what was wrong (the refusal catalogue,
// spec/refusals.yaml; docs/REFUSALS.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { protocols } from '../../generated/protocols.ts';
import type { ControlClient } from '../../sandbox/control-client.ts';
import { type ControlledSandbox, startSandboxWithControl } from './support.ts';

let t: ControlledSandbox;
/** The sandbox merchant's own request log (payment-gateway logs). */
let log: ControlClient;
beforeAll(async () => {
  t = await startSandboxWithControl();
  log = t.control;
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
    body: new Uint8Array(bytes),
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

describe("a refusal of the body, made before the operation is known, in the account's request log", () => {
  const CARD = '4564710000000004';
  /** The merchant's example purchase with its card, in the wire mode, one field's text replaced as sent. */
  const purchaseText = (wire: 'json' | 'form', field: string, sent: string) => {
    const body = { ...example('processCard'), paymentCardNumber: CARD, [field]: 'PLACEHOLDER' };
    const r = buildRequest(operation('processCard'), { body, signBody: true, wire });
    return { headers: r.headers as Record<string, string>, text: (r.body as string).replace(/PLACEHOLDER/, sent) };
  };
  const post = (r: { headers: Record<string, string>; text: string }) =>
    fetch(`${t.base}/post`, { method: 'POST', headers: r.headers, body: r.text }).then(answerOf);
  const latest = async () => (await log.requests({ latest: 1 })).requests[0]!;

  it('is logged for the account whose merchantUUID and apiKey it carried, naming the field and the rule, the card masked', async () => {
    const cases = [
      {
        wire: 'form' as const,
        // A control character in a form field: the XML answer could not give it back.
        sent: purchaseText('form', 'customerName', 'Jane%01'),
        message: "Field 'customerName' holds the character U+0001, which the XML answer cannot carry",
        errorCode: 'PGW_ERR_FORM_FIELD_INVALID',
      },
      {
        wire: 'json' as const,
        // A JSON field sent twice.
        sent: purchaseText('json', 'customerName', 'Jane","customerName":"Jane'),
        message: "Field 'customerName' is invalid: is sent more than once",
        errorCode: 'PGW_ERR_FIELD_UNREADABLE',
      },
    ];
    for (const { wire, sent, message, errorCode } of cases) {
      const before = (await latest())?.id ?? 0;
      expect(await post(sent), wire).toMatchObject({ responseCode: '-2', responseMessage: message });
      const line = await latest();
      expect(line.id, wire).toBeGreaterThan(before);
      expect(line, wire).toMatchObject({
        verb: 'POST',
        path: '/post',
        wire,
        responseCode: '-2',
        responseMessage: message,
        outcome: 'refused',
        errorCode,
        explanation: { check: 'body', field: 'customerName' },
      });
      expect(JSON.stringify(line)).not.toContain(CARD);
    }
  });

  it('a raw byte that is not UTF-8, and a card number sent as a field name, the number masked', async () => {
    const form = purchaseText('form', 'customerName', 'x');
    const [head, tail] = form.text.split('customerName=x');
    await postForm(formBytes(head!, 'customerName=Jos', [0xe9], tail!));
    expect(await latest()).toMatchObject({
      wire: 'form',
      errorCode: 'PGW_ERR_FORM_FIELD_INVALID',
      explanation: { check: 'body', field: 'customerName' },
    });
    await post({ ...form, text: `${form.text}&${CARD}=%01` });
    const line = await latest();
    expect(line).toMatchObject({ wire: 'form', errorCode: 'PGW_ERR_FORM_FIELD_INVALID' });
    expect(JSON.stringify(line)).not.toContain(CARD);
  });

  it("is in no account's log when the apiKey it carried is not the account's", async () => {
    const before = (await latest()).id;
    const sent = purchaseText('form', 'customerName', 'Jane%01');
    await post({ ...sent, text: sent.text.replace(/apiKey=[^&]*/, 'apiKey=notthekey') });
    expect((await latest()).id).toBe(before);
  });
});

describe('queryCard with neither of its two identifiers', () => {
  it('is told both alternatives, not only transactionReferenceID', async () => {
    const { transactionID: _, ...neither } = example('queryCard');
    for (const wire of WIRES)
      expect(await send('queryCard', neither, wire), wire).toEqual({
        status: 200,
        responseCode: '-3',
        responseMessage: "Field 'transactionReferenceID' is required unless 'transactionID' is sent",
      });
  });

  it('so is every field required only when none of some others is sent', async () => {
    const cases: [string, string, string][] = [
      ['processDDebit', 'fingerprint', "Field 'paymentAccountBSB' is required unless 'fingerprint' is sent"],
      ['getSurcharge', 'paymentCardNumber', "Field 'paymentCardNumber' is required unless 'cardID' is sent"],
      [
        'checkEnrollment',
        'paymentCardNumber',
        "Field 'paymentCardNumber' is required unless 'cardID' or 'digitalWalletToken' is sent",
      ],
    ];
    for (const [id, dropped, message] of cases)
      for (const wire of WIRES)
        expect(await send(id, { ...example(id), [dropped]: undefined }, wire), `${id} ${wire}`).toMatchObject({
          responseCode: '-3',
          responseMessage: message,
        });
  });
});

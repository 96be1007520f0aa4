// Findings: a card number sent in a free-text field (transactionProduct, customerName, custom1,
// cardName) was stored in clear and then answered 500 on every read; the settlement zip returned one
// whole (zip answers were not scanned); the database and key files were world-readable.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { protocols } from '../../generated/protocols.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';
import { type Account, createGateway } from '../../server-stubs/index.ts';
import { counts, FOREIGN_CARD, hardeningSandbox, merchant, purchase, send, signed } from './support.ts';

const sb = await hardeningSandbox();
afterAll(() => sb.close());

const cases: [string, string, Record<string, unknown>, Record<string, string>?][] = [
  ['processCard', 'custom1', purchase({ custom1: '4564710000000004' })],
  ['processCard', 'transactionProduct', purchase({ transactionProduct: `Gift for ${FOREIGN_CARD}` })],
  ['processCard', 'customerName', purchase({ customerName: '5555 5555 5555 4444' })],
  ['processCard', 'custom3', purchase({ custom3: 'ref 5555-5555-5555-4444' })],
  [
    'addCard',
    'cardName',
    {
      method: 'addCard',
      ...merchant,
      cardName: FOREIGN_CARD,
      cardNumber: '4564710000000004',
      cardExpiryMonth: '02',
      cardExpiryYear: '29',
    },
  ],
  ['createPayId', 'name', { payId: 'leak@merchant.payid.test', name: FOREIGN_CARD }],
  [
    'createAgreement',
    'agreement.arrangement',
    {
      payer: { name: 'Jane', account: { name: 'Jane', bsb: '802950', accountNumber: '123321' } },
      agreement: {
        arrangement: FOREIGN_CARD,
        payment: { type: 'BALN', frequency: 'ADHO', maximum: 10, pointInTime: 4 },
      },
    },
  ],
  [
    'createPayouts',
    'transactions[0].payee.name',
    {
      reference: 'PO-1',
      transactions: [
        {
          payee: { name: FOREIGN_CARD },
          transaction: { reference: 'PO-1-1', amount: 1, bsb: '802950', accNumber: '123321' },
        },
      ],
    },
  ],
];

// A field the operation does not declare is dropped as the gateway ignores it, but one holding a card
// number is refused all the same (docs/DEPLOY.md), whatever its name: a token purchase that also
// carries paymentCardNumber was charged to the stored card, the number silently dropped.
const tokenPurchase = {
  method: 'processCard',
  ...merchant,
  transactionAmount: '10.00',
  transactionCurrency: 'AUD',
  transactionProduct: 'Test',
  cardID: 'KOCI10023982',
};
cases.push(
  ['processCard', 'comment', purchase({ comment: FOREIGN_CARD })],
  ['tokenProcessCard', 'paymentCardNumber', { ...tokenPurchase, paymentCardNumber: FOREIGN_CARD }],
  ['tokenProcessCard', 'note.text', { ...tokenPurchase, note: { text: `card ${FOREIGN_CARD}` } }],
  // A field named __proto__ is a field (JSON.parse and the form reader keep it as one), not a prototype.
  [
    'processCard',
    '__proto__.paymentCardNumber',
    purchase(JSON.parse(`{"__proto__":{"paymentCardNumber":"${FOREIGN_CARD}"}}`)),
  ],
);

describe('card numbers are never stored or returned in clear', () => {
  for (const [operationId, field, body] of cases) {
    it(`${operationId}: a card number in ${field} is refused with -2 naming it, and nothing is stored`, async () => {
      const before = await counts(sb);
      const answer = await send(sb, signed(operationId, body));
      expect(answer.status).toBe(200);
      expect(Number(answer.json.responseCode), answer.json.responseMessage).toBe(-2);
      expect(answer.json.responseMessage).toBe(`Field '${field}' is invalid: must not hold a card number`);
      expect(await counts(sb)).toEqual(before);
    });
  }

  it('in the form mode too, a field the operation does not declare: refused in XML naming it, nothing stored', async () => {
    for (const [operationId, body, field] of [
      ['tokenProcessCard', { ...tokenPurchase, paymentCardNumber: FOREIGN_CARD }, 'paymentCardNumber'],
      // Named by a card number itself: named masked, never echoed.
      ['processCard', purchase({ [FOREIGN_CARD]: 'x' }), '555555XXXXXX4444'],
    ] as const) {
      const before = await counts(sb);
      const answer = await send(sb, signed(operationId, body, { wire: 'form' }));
      const read = protocols.byId('form')!.readAnswer(String(answer.response.body));
      expect('ok' in read && read.ok, String(answer.response.body)).toMatchObject({
        responseCode: '-2',
        responseMessage: `Field '${field}' is invalid: must not hold a card number`,
      });
      expect(String(answer.response.body)).not.toContain(FOREIGN_CARD);
      expect(await counts(sb)).toEqual(before);
    }
  });

  it('a field the operation does not declare that holds no card number is still ignored', async () => {
    const answer = await send(sb, signed('processCard', purchase({ comment: 'order 1042', note: { a: 1 } })));
    expect(answer.json.responseCode, answer.json.responseMessage).toBe('0');
  });

  it('the card-number fields themselves still take card numbers', async () => {
    const answer = await send(
      sb,
      signed('processCard', purchase({ custom1: 'order 1042', transactionProduct: 'Phone +61 7 3000 0000' })),
    );
    expect(answer.json.responseCode).toBe('0');
  });

  it("an answer whose transaction ID is of the spec's form is sent, the UUID's digits read as no card", async () => {
    // Drawn by a server team as 1336-<randomUUID()>: its last groups read 565659869529893, which passes
    // Luhn, and the approval was withheld as a leak (500) although the payment was made.
    const transactionID = '1336-b7d4d1d9-1075-4d36-a565-659869529893';
    const gateway = createGateway({
      accounts,
      handlers: echoHandlers(undefined, (_, result) => ({ ...(result as object), transactionID })),
    });
    const op = operation('processCard');
    const response = await gateway.handle(buildRequest(op, { body: requestExamples(op)[0]!.value }));
    expect(response.status).toBe(200);
    expect(JSON.parse(String(response.body))).toMatchObject({ responseCode: '0', transactionID });
  });

  it('in the log mode (production), an answer that breaks its schema and holds a card number is not sent on', async () => {
    // The log mode sends a violating answer as it stands: a paymentCardNumber returned unmasked broke
    // its pattern first, and was sent, HTTP 200, and so was a card in a field that broke its schema.
    const logged: string[] = [];
    // A hash the handler wrote itself (one that does not match, or a refusal's), and a list for an answer.
    const leaks: ((result: object) => unknown)[] = [
      (result) => ({ ...result, paymentCardNumber: FOREIGN_CARD }),
      (result) => ({ ...result, authCode: FOREIGN_CARD }),
      (result) => ({ ...result, customHash: FOREIGN_CARD }),
      () => ({ responseCode: '-2', responseMessage: 'no', customHash: FOREIGN_CARD }),
      () => [FOREIGN_CARD],
      () => [{ paymentCardNumber: FOREIGN_CARD }],
    ];
    for (const leak of leaks) {
      const gateway = createGateway({
        accounts,
        responseValidation: 'log',
        logger: { warn: () => {}, error: (message, fields) => logged.push(`${message} ${JSON.stringify(fields)}`) },
        handlers: echoHandlers(undefined, (_, result) => leak(result as object)),
      });
      const op = operation('processCard');
      const response = await gateway.handle(buildRequest(op, { body: requestExamples(op)[0]!.value }));
      expect(String(response.body)).not.toContain(FOREIGN_CARD);
      expect(response.status).toBe(500);
      expect(JSON.parse(String(response.body)).responseCode).toBe('-4');
    }
    expect(logged).toHaveLength(leaks.length);
    expect(logged.join('\n')).not.toContain(FOREIGN_CARD);
    // Without a card number, the log mode still sends it on (it logs and counts it).
    const gateway = createGateway({
      accounts,
      responseValidation: 'log',
      logger: { warn: () => {}, error: () => {} },
      handlers: echoHandlers(undefined, (_, result) => ({ ...(result as object), authCode: 'x'.repeat(200) })),
    });
    const op = operation('processCard');
    const response = await gateway.handle(buildRequest(op, { body: requestExamples(op)[0]!.value }));
    expect(response.status).toBe(200);
  });

  it('a zip or CSV answer holding a card number is never sent', async () => {
    const gateway = createGateway({
      accounts,
      handlers: echoHandlers(undefined, (op, result) => {
        if (op.operationId === 'getSettlement')
          return zipSync({ 'settlement.csv': strToU8(`id,number\n1,${FOREIGN_CARD}\n`) });
        if (op.operationId === 'retrieveBatch') return `id,number\n1,${FOREIGN_CARD}\n`;
        return result;
      }),
    });
    for (const id of ['getSettlement', 'retrieveBatch']) {
      const op = operation(id);
      const response = await gateway.handle(buildRequest(op, { body: requestExamples(op)[0]!.value }));
      expect(response.headers['content-type']).toBe('application/json');
      expect(String(response.body)).not.toContain(FOREIGN_CARD);
      expect(JSON.parse(String(response.body)).responseCode).toBe('-4');
    }
  });

  it('creates the database, its WAL and the key file readable by their owner only', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-modes-'));
    try {
      const file = path.join(dir, 'data', 'sandbox.db');
      const s = await hardeningSandbox(file);
      await send(s, signed('processCard', purchase()));
      for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}.key`])
        expect((statSync(f).mode & 0o777).toString(8), f).toBe('600');
      expect((statSync(path.dirname(file)).mode & 0o077).toString(8)).toBe('0');
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('large file answers are scanned too', () => {
  it('a card number deep in a large zip, even across a chunk boundary, is never sent', async () => {
    const { fileHoldsCardNumber } = await import('../../server-stubs/core/answer.ts');
    const { zipSync: zip, strToU8: u8 } = await import('fflate');
    const rows = Array.from({ length: 60_000 }, (_, i) => `row-${i},12.34,AUD,456471XXXXXX0004,Tea`).join('\n');
    const clean = zip({ 's.csv': u8(rows) }, { level: 0 });
    expect(clean.length).toBeGreaterThan(256 * 1024);
    expect(await fileHoldsCardNumber(clean)).toBe(false);
    // Stored (level 0), the CSV starts 35 bytes into the zip: 16,349 puts the number across the first 16 KiB slice.
    for (const at of [16_349, 16_340, 65_495, 1_000_000, rows.length - 3]) {
      const dirty = zip(
        { 's.csv': u8(`${rows.slice(0, at)},${FOREIGN_CARD},${rows.slice(at)}`) },
        { level: at === 1_000_000 ? 6 : 0 },
      );
      expect(await fileHoldsCardNumber(dirty), String(at)).toBe(true);
    }
  });

  it('a transaction ID a chunk cuts in its UUID is read whole: no card number, the file sent', async () => {
    // Finding (test:beside): about 1 small settlement zip in 450 was withheld as a leak, -4. The
    // inflater hands the CSV over in chunks, and a chunk that ended inside a transaction ID was read
    // with that ID cut short: 1336-b1d1b04f-4725-6512-0345-5 is no UUID, and its digits from 4725 on
    // read as a card (4725651203455 passes Luhn). Whole, the ID is a UUID, whose digits join nothing.
    const { fileHoldsCardNumber } = await import('../../server-stubs/core/answer.ts');
    const { zipSync: zip, strToU8: u8 } = await import('fflate');
    const id = '1336-b1d1b04f-4725-6512-0345-51ec49788139';
    const rows = Array.from({ length: 60_000 }, (_, i) => `row-${i},12.34,AUD,456471XXXXXX0004,Tea`).join('\n');
    // Stored, the CSV starts 35 bytes into the zip and the first 16 KiB slice ends after its 16,349th
    // character: the ID is put so that the slice ends after its "-51".
    const before = 16_349 - id.indexOf('ec4');
    expect(before).toBeGreaterThan(0);
    const file = zip({ 's.csv': u8(`${rows.slice(0, before - 1)}\n${id},${rows.slice(before - 1)}`) }, { level: 0 });
    expect(file.length).toBeGreaterThan(256 * 1024);
    expect(await fileHoldsCardNumber(file)).toBe(false);
  });

  it('a streamed zip whose chunk holds only the middle of a transaction ID is sent: the ID is read whole', async () => {
    // The same finding, where a chunk holds no delimiter at all: the cell carried from the chunk before
    // (1336-) and this chunk's part of the ID were read as they stood.
    const { answer } = await import('../../server-stubs/core/answer.ts');
    const { zipSync: zip, strToU8: u8 } = await import('fflate');
    const id = '1336-fa81519e-2084-e579-8907-4307593afc3e';
    const csv = `transactionID,status\n${id},approved\n`;
    const file = zip({ 's.csv': u8(csv) }, { level: 0 });
    // Stored, the CSV starts 35 bytes into the zip: chunks end after the ID's 1336- and after its afc.
    const at = 35 + csv.indexOf(id);
    const cuts = [0, at + 5, at + id.indexOf('afc') + 3, file.length];
    const chunks = cuts.slice(1).map((end, i) => file.subarray(cuts[i], end));
    const answered = answer(
      operation('getSettlement'),
      { kind: 'merchant', id: 'm' } as Account,
      {},
      (async function* () {
        yield* chunks;
      })(),
    );
    if (!('response' in answered)) throw new Error(JSON.stringify(answered));
    const sent: Uint8Array[] = [];
    for await (const chunk of answered.response.body as AsyncIterable<Uint8Array>) sent.push(chunk);
    expect(Buffer.concat(sent)).toEqual(Buffer.from(file));
  });
});

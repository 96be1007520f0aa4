// Stateful scenarios for the rules the seed states, run through the typed client with the public
// sandbox's approved test card. Skipped against the mock, which keeps no state.
import { createGatewayClient, isApproved, type GatewayClient } from '../generated/client.ts';
import { readSettlement } from '../runtime/settlement.ts';
import { instantOf } from '../runtime/gateway-time.ts';
import { payoutTimeZone } from '../generated/spec-constants.ts';

/** How long the payout scenario waits for an NPP attempt to end (NPP is real time: seconds). */
const PAYOUT_WAIT_MS = 30_000;
import { chooseMethod, route } from '../server-stubs/index.ts';
import { judge, type Check, type RunContext } from './checks.ts';
import { code, customer, expect, show, visa } from './stateful.ts';
import { answerOf, send } from './http.ts';
import { modelCheck } from './model.ts';
import { record } from './recording.ts';
import { operations } from '../generated/operations.ts';

const headersOf = (request: Request): Record<string, string> => {
  const out: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
};

/**
 * A typed client whose every exchange is judged as the operation checks judge theirs (status, content
 * type, schema, echoes, sums, result hashes): a scenario passes only if every answer it got keeps the
 * contract, not only the ones it asserts on.
 */
export function watchedClient(ctx: RunContext, problems: string[]): GatewayClient {
  const c = ctx.creds;
  const judged = async (request: Request): Promise<Response> => {
    const text = request.method === 'GET' ? '' : await request.clone().text();
    const response = await fetch(request);
    let sent: Record<string, unknown> | undefined;
    try {
      sent = text ? JSON.parse(text) : undefined;
    } catch {
      sent = undefined;
    }
    const routed = route(request.method, new URL(request.url).pathname);
    const chosen = 'match' in routed ? chooseMethod(routed.match.candidates, sent, routed.match.pathMethod) : undefined;
    if (chosen && 'op' in chosen) {
      const url = new URL(request.url);
      const params = 'match' in routed ? routed.match.params : undefined;
      record({
        op: chosen.op,
        verb: request.method,
        url: request.url,
        headers: headersOf(request),
        body: text || undefined,
        params: params ?? {},
        query: Object.fromEntries(url.searchParams),
      });
      const problem = judge(chosen.op, sent, await answerOf(response.clone(), chosen.op), ctx, params);
      if (problem) problems.push(`${chosen.op.operationId}: ${problem}`);
    }
    return response;
  };
  return createGatewayClient({
    baseUrl: ctx.base,
    merchantUUID: c.merchantUUID,
    apiKey: c.apiKey,
    passphrase: c.passphrase,
    partner: { partnerUUID: c.partnerUUID, apiKey: c.partnerApiKey, passphrase: c.partnerPassphrase },
    fetch: judged,
  });
}

const scenario = (
  operationId: string,
  tags: string[],
  name: string,
  body: (g: GatewayClient, ctx: RunContext) => Promise<void>,
): Check => ({
  operationId,
  tags,
  kind: 'scenario',
  name,
  run: async (ctx) => {
    if (ctx.mock) return { skip: 'the mock keeps no state: scenarios need a stateful implementation' };
    const problems: string[] = [];
    await body(watchedClient(ctx, problems), ctx);
    if (problems.length) throw new Error(`an answer broke the contract: ${problems.join(' | ')}`);
  },
});

export const scenarioChecks = (): Check[] => [
  modelCheck(watchedClient),
  scenario(
    'processCapture',
    ['Direct API'],
    'authorise → capture → refund; a capture above the authorisation is refused',
    async (g) => {
      const auth = await g.processAuth({
        transactionAmount: '40.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Contract',
        ...customer,
        ...visa,
      } as never);
      expect(isApproved(auth), `processAuth: ${show(auth)}`);
      const id = auth.transactionID;
      const over = await g.processCapture({
        transactionID: id,
        transactionAmount: '40.00',
        transactionCurrency: 'AUD',
        captureAmount: '40.01',
      });
      expect(code(over) < 0, `a capture of 40.01 on 40.00 was not refused: ${show(over)}`);
      const capture = await g.processCapture({
        transactionID: id,
        transactionAmount: '40.00',
        transactionCurrency: 'AUD',
        captureAmount: '25.00',
      });
      expect(isApproved(capture), `processCapture: ${show(capture)}`);
      const refund = await g.refundCard({
        transactionID: id,
        transactionAmount: '40.00',
        transactionCurrency: 'AUD',
        refundAmount: '10.00',
      });
      expect(isApproved(refund), `refundCard: ${show(refund)}`);
      const beyond = await g.refundCard({
        transactionID: id,
        transactionAmount: '40.00',
        transactionCurrency: 'AUD',
        refundAmount: '15.01',
      });
      expect(code(beyond) < 0 || code(beyond) > 0, `a refund beyond the capture was approved: ${show(beyond)}`);
    },
  ),
  scenario(
    'tokenProcessCard',
    ['Token'],
    'addCard → purchase with cardKeyReplace → old key refused, new key accepted; a refused purchase keeps the key',
    async (g) => {
      const added = await g.token.addCard({
        cardName: 'Contract Test',
        cardNumber: visa.paymentCardNumber,
        cardExpiryMonth: '02',
        cardExpiryYear: '29',
      });
      expect(isApproved(added), `addCard: ${show(added)}`);
      const buy = (key: string, replace: string, amount = '5.00') =>
        g.token.processCard({
          cardID: added.cardID,
          cardKey: key,
          cardKeyReplace: replace,
          transactionAmount: amount,
          transactionCurrency: 'AUD',
          transactionProduct: 'Contract',
        });
      const first = await buy(added.cardKey, 'ContractKey00001');
      expect(code(first) >= 0, `the first purchase was refused: ${show(first)}`);
      const stale = await buy(added.cardKey, 'ContractKey00002');
      expect(code(stale) < 0, `the old key was accepted: ${show(stale)}`);
      const refused = await buy('ContractKey00001', 'ContractKey00003', '5.0');
      expect(code(refused) < 0, `an invalid amount was not refused: ${show(refused)}`);
      const fresh = await buy('ContractKey00001', 'ContractKey00004');
      expect(code(fresh) >= 0, `the new key was refused (a refused purchase must leave the key): ${show(fresh)}`);
    },
  ),
  scenario('addBlacklistedCard', ['Direct API'], 'a blacklisted card is declined', async (g) => {
    const number = '5123456789012346';
    const listed = await g.addBlacklistedCard({
      cardName: 'Contract Test',
      cardNumber: number,
      cardExpiryMonth: '12',
      cardExpiryYear: '40',
    });
    expect(isApproved(listed), `addBlacklistedCard: ${show(listed)}`);
    try {
      const r = await g.processCard({
        transactionAmount: '5.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Contract',
        ...customer,
        paymentCardNumber: number,
        paymentCardExpiry: '1240',
        paymentCardName: 'C',
        paymentCardCSC: '123',
      } as never);
      expect(code(r) > 0, `a blacklisted card was not declined: ${show(r)}`);
    } finally {
      await g.removeBlacklistedCard({ cardID: listed.cardID });
    }
  }),
  scenario('getPayToPaymentStatus', ['PayTo'], 'a PayTo payment and then its status', async (g) => {
    const agreement = await g.payto.createAgreement({
      payer: { name: 'Contract', account: { name: 'Contract', bsb: '802950', accountNumber: '123321' } },
      agreement: { payment: { type: 'BALN', frequency: 'ADHO', maximum: 50 } },
    });
    expect(isApproved(agreement), `createAgreement: ${show(agreement)}`);
    const id = agreement.result.agreementIdentification;
    const paid = await g.payto.createPayment(id, {
      payer: { name: 'Contract' },
      transaction: { reference: 'CT-1', amount: 12.5 },
    });
    expect(isApproved(paid), `createPayment: ${show(paid)}`);
    const status = await g.payto.getPaymentStatus(id, paid.result.transaction.id);
    expect(
      isApproved(status) && status.result.status === paid.result.transaction.status,
      `getPaymentStatus: ${show(status)}`,
    );
  }),
  scenario(
    'getPayoutTransactionStatus',
    ['Payouts'],
    'a payout transaction moves from its NPP attempt (declined) to a DE attempt',
    async (g) => {
      const created = await g.payouts.create({
        reference: `CT-${Date.now()}`,
        transactions: [
          {
            payee: { name: 'Contract' },
            transaction: { reference: 'CT-PO-1', amount: 3, bsb: '802950', accNumber: '11111111' },
          },
        ],
      });
      expect(isApproved(created), `createPayouts: ${show(created)}`);
      const tx = created.result.transactions[0]!;
      // The attempts move on with time: NPP answers within seconds, then a DE attempt is made. Asked
      // again until the DE attempt is there (every answer judged on the way), for up to PAYOUT_WAIT_MS.
      const read = () => g.payouts.getTransactionStatus(created.result.payoutId, tx.transactionId);
      let status = await read();
      for (
        const until = Date.now() + PAYOUT_WAIT_MS;
        isApproved(status) && status.result.payouts.length < 2 && Date.now() < until;
      ) {
        await new Promise((r) => setTimeout(r, 500));
        status = await read();
      }
      expect(isApproved(status), `getTransactionStatus: ${show(status)}`);
      const attempts = status.result.payouts.map((p) => `${p.type} ${p.status}`).join(', ');
      expect(
        /^NPP declined, DE /.test(attempts),
        `attempts ${attempts || '(none)'} ${PAYOUT_WAIT_MS / 1000} s after the payout was made: the account 11111111 goes NPP (declined), then DE`,
      );
      // Made just now: read in the zone the spec gives (x-time), its time is now, give or take the clocks' skew.
      const first = status.result.payouts[0]!;
      const lag = Date.now() - instantOf(first.createdAt, payoutTimeZone).getTime();
      expect(
        Math.abs(lag) < 10 * 60_000,
        `createdAt ${first.createdAt} of a payout made just now is ${Math.round(lag / 60_000)} min from now read in ${payoutTimeZone}: not written in ${payoutTimeZone}`,
      );
    },
  ),
  scenario('getSettlement', ['Direct API'], 'the settlement zip holds the captured transactions', async (g) => {
    const auth = await g.processAuth({
      transactionAmount: '7.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'Contract',
      ...customer,
      ...visa,
    } as never);
    expect(isApproved(auth), `processAuth: ${show(auth)}`);
    const capture = await g.processCapture({
      transactionID: auth.transactionID,
      transactionAmount: '7.00',
      transactionCurrency: 'AUD',
      captureAmount: '7.00',
    });
    expect(isApproved(capture) && capture.authSettledDate, `processCapture: ${show(capture)}`);
    const day = capture.authSettledDate!;
    const zip = await g.getSettlement({ settlementFrom: day, settlementTo: day });
    expect(zip instanceof Uint8Array, `getSettlement: ${show(zip)}`);
    const rows = readSettlement(zip).rows;
    const row = rows.find((r) => r.transactionID === capture.transactionID);
    expect(row, `the capture ${capture.transactionID} is not in the settlement file`);
    expect(
      row.transactionAmount === '7.00',
      `the settlement row of the capture says ${row.transactionAmount}, the capture was 7.00`,
    );
  }),
  scenario(
    'processVoid',
    ['Direct API'],
    'a voided authorisation refuses captures, refunds and a second void',
    async (g) => {
      const auth = await g.processAuth({
        transactionAmount: '9.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Contract',
        ...customer,
        ...visa,
      } as never);
      expect(isApproved(auth), `processAuth: ${show(auth)}`);
      const voided = await g.processVoid({ transactionID: auth.transactionID });
      expect(isApproved(voided), `processVoid: ${show(voided)}`);
      const capture = await g.processCapture({
        transactionID: auth.transactionID,
        transactionAmount: '9.00',
        transactionCurrency: 'AUD',
        captureAmount: '1.00',
      });
      expect(code(capture) < 0, `a capture of a voided authorisation was not refused: ${show(capture)}`);
      const refund = await g.refundCard({
        transactionID: auth.transactionID,
        transactionAmount: '1.00',
        transactionCurrency: 'AUD',
        refundAmount: '1.00',
      });
      expect(code(refund) !== 0, `a refund of a voided authorisation was approved: ${show(refund)}`);
      const again = await g.processVoid({ transactionID: auth.transactionID });
      expect(code(again) < 0, `a second void was not refused: ${show(again)}`);
    },
  ),
  scenario(
    'queryCard',
    ['Direct API'],
    'a purchase found by its id and by its reference, with what it captured and refunded',
    async (g) => {
      const reference = `CT-Q-${Date.now()}`;
      const sale = await g.processCard({
        transactionAmount: '8.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Contract',
        transactionReferenceID: reference,
        ...customer,
        ...visa,
      } as never);
      expect(isApproved(sale), `processCard: ${show(sale)}`);
      const refund = await g.refundCard({
        transactionID: sale.transactionID,
        transactionAmount: '3.00',
        transactionCurrency: 'AUD',
        refundAmount: '3.00',
      });
      expect(isApproved(refund), `refundCard: ${show(refund)}`);
      for (const by of [{ transactionID: sale.transactionID }, { transactionReferenceID: reference }]) {
        const found = await g.queryCard(by);
        expect(isApproved(found), `queryCard ${show(by)}: ${show(found)}`);
        expect(
          found.transactionID === sale.transactionID &&
            found.transactionAmount === '8.00' &&
            found.refundedAmount === '3.00',
          `queryCard ${show(by)} answered ${show(found)}`,
        );
      }
    },
  ),
  scenario('refundCard', ['Direct API'], 'a purchase refunded in full refuses a further refund', async (g) => {
    const sale = await g.processCard({
      transactionAmount: '6.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'Contract',
      ...customer,
      ...visa,
    } as never);
    expect(isApproved(sale), `processCard: ${show(sale)}`);
    const refund = await g.refundCard({
      transactionID: sale.transactionID,
      transactionAmount: '6.00',
      transactionCurrency: 'AUD',
      refundAmount: '6.00',
    });
    expect(isApproved(refund), `refundCard: ${show(refund)}`);
    const more = await g.refundCard({
      transactionID: sale.transactionID,
      transactionAmount: '0.01',
      transactionCurrency: 'AUD',
      refundAmount: '0.01',
    });
    expect(code(more) !== 0, `a refund beyond a full refund was approved: ${show(more)}`);
  }),
  scenario(
    'cardInfo',
    ['Token'],
    'a stored card reads back as stored: its BIN, first and last digits, and its expiry after changeExpiry',
    async (g) => {
      const number = '5123456789012346';
      const added = await g.token.addCard({
        cardName: 'Contract Test',
        cardNumber: number,
        cardExpiryMonth: '05',
        cardExpiryYear: '30',
      });
      expect(isApproved(added), `addCard: ${show(added)}`);
      const info = await g.token.cardInfo({ cardID: added.cardID, cardKey: added.cardKey });
      expect(isApproved(info), `cardInfo: ${show(info)}`);
      expect(
        info.cardBin === number.slice(0, 6) &&
          info.cardNumberFirst === number.slice(0, 4) &&
          info.cardNumberLast === number.slice(-4),
        `cardInfo shows ${info.cardBin}/${info.cardNumberFirst}…${info.cardNumberLast} for ${number.slice(0, 6)}…${number.slice(-4)}`,
      );
      expect(
        info.cardExpiryMonth === '05' && info.cardExpiryYear === '30',
        `cardInfo shows expiry ${info.cardExpiryMonth}/${info.cardExpiryYear}, 05/30 was stored`,
      );
      const changed = await g.token.changeExpiry({
        cardID: added.cardID,
        cardKey: added.cardKey,
        cardExpiryMonth: '06',
        cardExpiryYear: '31',
      });
      expect(isApproved(changed), `changeExpiry: ${show(changed)}`);
      const after = await g.token.cardInfo({ cardID: added.cardID, cardKey: added.cardKey });
      expect(
        isApproved(after) && after.cardExpiryMonth === '06' && after.cardExpiryYear === '31',
        `after changeExpiry cardInfo shows ${show(after)}`,
      );
    },
  ),
  scenario('getPayId', ['PayID'], 'Get PayID answers 201', async (g, ctx) => {
    const payId = `ct-${Date.now()}@merchant.payid.test`;
    const created = await g.payid.create({ payId, name: 'Contract' });
    expect(isApproved(created), `createPayId: ${show(created)}`);
    const op = operations.find((o) => o.operationId === 'getPayId')!;
    const a = await send(ctx.base, { op, params: { payId } }, ctx.creds);
    expect(a.status === 201, `HTTP ${a.status}, Get PayID answers 201`);
    expect(a.json?.result?.payId === payId, `Get PayID answered ${show(a.json)}`);
  }),
];

// Stateful scenarios for the rules the seed states, run through the typed client with the public
// sandbox's approved test card. Skipped against the mock, which keeps no state.
import { createGatewayClient, isApproved, type GatewayClient } from '../generated/client.ts';
import { readSettlement } from '../runtime/settlement.ts';
import { instantOf, instantsOf, wallTime } from '../runtime/gateway-time.ts';
import { payoutTimeZone, settlementDates } from '../generated/spec-constants.ts';
import { ControlError, createControlClient } from '../sandbox/control-client.ts';
import { ExchangeFailed } from '../runtime/bounded-fetch.ts';

/** How long the payout scenario waits for an NPP attempt to end (NPP is real time: seconds). */
const PAYOUT_WAIT_MS = 30_000;
import { chooseMethod, route } from '../server-stubs/index.ts';
import { judge, type Check, type Outcome, type RunContext } from './checks.ts';
import { code, customer, expect, notApproved, show, visa } from './stateful.ts';
import { answerOf, exchange, send } from './http.ts';
import { modelCheck } from './model.ts';
import { record } from './recording.ts';
import { operations } from '../generated/operations.ts';
import { exampleValue } from '../runtime/document.ts';
import { doc } from './requests.ts';

const headersOf = (request: Request): Record<string, string> => {
  const out: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
};

/** The server's "now": the HTTP Date header of the last answer a watched client received. */
export interface ServerTime {
  date?: Date;
}

/**
 * A typed client whose every exchange is judged as the operation checks judge theirs (status, content
 * type, schema, echoes, sums, result hashes): a scenario passes only if every answer it got keeps the
 * contract, not only the ones it asserts on. `seen` keeps the last answer's Date header.
 */
export function watchedClient(ctx: RunContext, problems: string[], seen: ServerTime = {}): GatewayClient {
  const c = ctx.creds;
  const judged = async (request: Request): Promise<Response> => {
    const text = request.method === 'GET' ? '' : await request.clone().text();
    const response = await exchange(request);
    const date = response.headers.get('date');
    if (date) seen.date = new Date(date);
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

/** What a scenario reads the server's time from: its answers' Date header. */
interface Server {
  /** The last answer's Date header: the server's "now", never this machine's clock. */
  now(): Date;
}

const scenario = (
  operationId: string,
  tags: string[],
  name: string,
  body: (g: GatewayClient, ctx: RunContext, server: Server) => Promise<Outcome>,
  options: { alone?: boolean } = {},
): Check => ({
  operationId,
  tags,
  kind: 'scenario',
  name,
  ...options,
  run: async (ctx) => {
    if (ctx.mock) return { skip: 'the mock keeps no state: scenarios need a stateful implementation' };
    const problems: string[] = [];
    const seen: ServerTime = {};
    const server: Server = {
      now: () => {
        if (!seen.date || Number.isNaN(seen.date.getTime()))
          throw new Error(
            'the answers carry no HTTP Date header: the server\'s "now" cannot be read (RFC 9110 §6.6.1)',
          );
        return seen.date;
      },
    };
    const outcome = await body(watchedClient(ctx, problems, seen), ctx, server);
    if (problems.length) throw new Error(`an answer broke the contract: ${problems.join(' | ')}`);
    return outcome;
  },
});

/**
 * The server's own clock for the suite's merchant, where it has one it lets a client move: the
 * sandbox's control API (sandbox/control.openapi.yaml), reached with the merchant's credentials.
 * Undefined for a server without it (a 404, a refusal, no answer).
 */
async function movableClock(ctx: RunContext) {
  const control = createControlClient({
    baseUrl: ctx.base,
    accountId: ctx.creds.merchantUUID,
    apiKey: ctx.creds.apiKey,
    // Through the run's bounded client, as every other exchange of the suite.
    fetch: exchange,
  });
  try {
    await control.clock();
    return control;
  } catch (error) {
    if (error instanceof ControlError || error instanceof TypeError || error instanceof ExchangeFailed)
      return undefined;
    throw error;
  }
}

/** A payment (processAuth or processCard) of this amount with the test card and customer. */
const pay = <R>(send: (body: never) => Promise<R>, amount: string, more: Record<string, string> = {}): Promise<R> =>
  send({
    transactionAmount: amount,
    transactionCurrency: 'AUD',
    transactionProduct: 'Contract',
    ...more,
    ...customer,
    ...visa,
  } as never);

/** A card stored for the key scenarios, and a token purchase on it with a key and its replacement. */
async function storedCard(g: GatewayClient) {
  const added = await g.token.addCard({
    cardName: 'Contract Test',
    cardNumber: visa.paymentCardNumber,
    cardExpiryMonth: '02',
    cardExpiryYear: '29',
  });
  expect(isApproved(added), notApproved('addCard', added));
  const buy = (key: string, replace: string, amount = '5.00') =>
    g.token.processCard({
      cardID: added.cardID,
      cardKey: key,
      cardKeyReplace: replace,
      transactionAmount: amount,
      transactionCurrency: 'AUD',
      transactionProduct: 'Contract',
    });
  return { added, buy };
}

/** The spec's example of a declined card purchase (processCard's result example of a code above 0): its amount and code. */
function declinedExample(): { name: string; amount: string; code: number } {
  const op = operations.find((o) => o.operationId === 'processCard')!;
  for (const name of op.examples.result) {
    const value = exampleValue(doc, name) as { responseCode: string; transactionAmount?: string };
    if (Number(value.responseCode) > 0 && value.transactionAmount)
      return { name, amount: value.transactionAmount, code: Number(value.responseCode) };
  }
  throw new Error("the spec's processCard examples show no declined purchase");
}

/** A settled transaction the settlement scenario made: what its row must say. */
interface Settled {
  transactionID: string;
  amount: string;
  day: string;
}

export const scenarioChecks = (): Check[] => [
  modelCheck(watchedClient),
  scenario(
    'processCapture',
    ['Direct API'],
    'authorise → capture → refund; a capture above the authorisation, alone or with the captures before it, is refused; a captured authorisation is not voided',
    async (g) => {
      const auth = await pay(g.processAuth, '40.00');
      expect(isApproved(auth), notApproved('processAuth', auth));
      const id = auth.transactionID;
      // Every step on the one authorisation of 40.00 AUD.
      const on = { transactionID: id, transactionAmount: '40.00', transactionCurrency: 'AUD' } as const;
      const capture = (captureAmount: string) => g.processCapture({ ...on, captureAmount });
      const refund = (refundAmount: string) => g.refundCard({ ...on, refundAmount });
      const over = await capture('40.01');
      expect(code(over) < 0, `a capture of 40.01 on 40.00 was not refused: ${show(over)}`);
      const captured = await capture('25.00');
      expect(isApproved(captured), notApproved('processCapture', captured));
      // Captures add up: 25.00 captured, 15.01 more would pass 40.00.
      const beyondAll = await capture('15.01');
      expect(
        code(beyondAll) < 0,
        `a capture of 15.01 after 25.00 of 40.00 was not refused (captures add up to the authorisation): ${show(beyondAll)}`,
      );
      const voided = await g.processVoid({ transactionID: id });
      expect(code(voided) < 0, `a captured authorisation was voided (it is refunded instead): ${show(voided)}`);
      const refunded = await refund('10.00');
      expect(isApproved(refunded), notApproved('refundCard', refunded));
      const beyond = await refund('15.01');
      expect(code(beyond) < 0 || code(beyond) > 0, `a refund beyond the capture was approved: ${show(beyond)}`);
    },
  ),
  scenario(
    'tokenProcessCard',
    ['Token'],
    'addCard → purchase with cardKeyReplace → old key refused, new key accepted; a refused purchase keeps the key',
    async (g) => {
      const { added, buy } = await storedCard(g);
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
  scenario(
    'tokenProcessCard',
    ['Token'],
    'a declined token purchase (responseCode above 0) replaces the key as an approved one does',
    async (g) => {
      // The amount the spec's own declined purchase answers with a decline (processCard's example).
      const declining = declinedExample();
      const { added, buy } = await storedCard(g);
      const declined = await buy(added.cardKey, 'ContractKey00011', declining.amount);
      if (code(declined) === 0)
        return {
          skip: `the server approved a token purchase of ${declining.amount}, which the spec's example ${declining.name} declines (${declining.code}): no decline to check the key after`,
        };
      expect(
        code(declined) > 0,
        `a token purchase of ${declining.amount} was refused, not declined: ${show(declined)}`,
      );
      const stale = await buy(added.cardKey, 'ContractKey00012');
      expect(
        code(stale) < 0,
        `the old key was accepted after a declined purchase (responseCode ${code(declined)}): a result of responseCode >= 0 replaces it (seed §4.2): ${show(stale)}`,
      );
      const fresh = await buy('ContractKey00011', 'ContractKey00013');
      expect(
        code(fresh) >= 0,
        `the new key was refused after a declined purchase (responseCode ${code(declined)}): a result of responseCode >= 0 replaces the key (seed §4.2): ${show(fresh)}`,
      );
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
    expect(isApproved(listed), notApproved('addBlacklistedCard', listed));
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
    expect(isApproved(agreement), notApproved('createAgreement', agreement));
    const id = agreement.result.agreementIdentification;
    const paid = await g.payto.createPayment(id, {
      payer: { name: 'Contract' },
      transaction: { reference: 'CT-1', amount: 12.5 },
    });
    expect(isApproved(paid), notApproved('createPayment', paid));
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
    async (g, _ctx, server) => {
      const created = await g.payouts.create({
        reference: `CT-${Date.now()}`,
        transactions: [
          {
            payee: { name: 'Contract' },
            transaction: { reference: 'CT-PO-1', amount: 3, bsb: '802950', accNumber: '11111111' },
          },
        ],
      });
      expect(isApproved(created), notApproved('createPayouts', created));
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
      expect(isApproved(status), notApproved('getTransactionStatus', status));
      const attempts = status.result.payouts.map((p) => `${p.type} ${p.status}`).join(', ');
      expect(
        /^NPP declined, DE /.test(attempts),
        `attempts ${attempts || '(none)'} ${PAYOUT_WAIT_MS / 1000} s after the payout was made: the account 11111111 goes NPP (declined), then DE`,
      );
      // Made just now: read in the zone the spec gives (x-time), its time is the server's now (the
      // answer's Date header), give or take the clock's skew and the attempts' wait.
      const first = status.result.payouts[0]!;
      // The nearer reading of a time the clocks show twice (the hour repeated when daylight saving ends).
      const lags = instantsOf(first.createdAt, payoutTimeZone).map((at) => server.now().getTime() - at.getTime());
      const lag = lags.sort((a, b) => Math.abs(a) - Math.abs(b))[0] ?? Number.POSITIVE_INFINITY;
      expect(
        Math.abs(lag) < 10 * 60_000,
        `createdAt ${first.createdAt} of a payout made just now is ${Math.round(lag / 60_000)} min from the answer's time (${wallTime(server.now(), payoutTimeZone)}) read in ${payoutTimeZone}: not written in ${payoutTimeZone}`,
      );
    },
  ),
  scenario(
    'getSettlement',
    ['Direct API'],
    'the settlement file lists every transaction settled on its days, each once, with its amount and day',
    async (g, ctx, server) => {
      const zone = settlementDates.zone;
      const made: Settled[] = [];
      // Two captures (one of part of its authorisation) and a purchase: a file that keeps some rows
      // and drops others does not hold all three.
      for (const [authorised, captured] of [
        ['7.00', '7.00'],
        ['9.00', '4.50'],
      ] as const) {
        const auth = await pay(g.processAuth, authorised);
        expect(isApproved(auth), notApproved('processAuth', auth));
        const capture = await g.processCapture({
          transactionID: auth.transactionID,
          transactionAmount: authorised,
          transactionCurrency: 'AUD',
          captureAmount: captured,
        });
        expect(isApproved(capture) && capture.authSettledDate, `processCapture: ${show(capture)}`);
        made.push({ transactionID: capture.transactionID, amount: captured, day: capture.authSettledDate! });
      }
      const sale = await pay(g.processCard, '6.25');
      expect(isApproved(sale) && sale.authSettledDate, `processCard: ${show(sale)}`);
      made.push({ transactionID: sale.transactionID, amount: '6.25', day: sale.authSettledDate! });
      const days = made.map((m) => m.day).sort();
      const [from, to] = [days[0]!, days.at(-1)!];
      // A day still to come lists nothing yet (x-settlement-file): made after the cut-off or on a
      // weekend, the transactions settle on a later day than the server's today. Its clock is moved
      // on to that day where the server lets the suite move it; else their file cannot be read yet.
      const today = wallTime(server.now(), zone).slice(0, 10);
      if (to > today) {
        // Asked now, their file lists none of those still to settle (the judged client also holds
        // every row to x-settlement-file): a server is held to that whether or not its clock moves.
        const early = await g.getSettlement({ settlementFrom: from, settlementTo: to });
        expect(early instanceof Uint8Array, `getSettlement ${from} to ${to}: ${show(early)}`);
        const soon = readSettlement(early).rows.filter((r) =>
          made.some((m) => m.day > today && m.transactionID === r.transactionID),
        );
        expect(
          soon.length === 0,
          `the file asked on ${today} lists ${soon.map((r) => r.transactionID).join(', ')}, which settle after it (${to})`,
        );
        const clock = await movableClock(ctx);
        if (!clock)
          return {
            skip: `the transactions settle on ${to} (their authSettledDate), after the server's today (${today} in ${zone}), and the server has no clock the suite may move (the sandbox's control API): their file is read on a run made before the cut-off on a business day`,
          };
        const seconds = Math.ceil((instantOf(`${to} 00:00:00`, zone).getTime() - server.now().getTime()) / 1000) + 1;
        await clock.advanceClock({ seconds });
        ctx.note?.(
          `getSettlement: the transactions settle on ${to}, after the server's today (${today} in ${zone}): moved merchant ${ctx.creds.merchantUUID}'s sandbox clock on by ${seconds} s (control API) to read their file`,
        );
      }
      const zip = await g.getSettlement({ settlementFrom: from, settlementTo: to });
      expect(zip instanceof Uint8Array, `getSettlement ${from} to ${to}: ${show(zip)}`);
      const rows = readSettlement(zip).rows;
      for (const m of made) {
        const listed = rows.filter((r) => r.transactionID === m.transactionID);
        expect(
          listed.length === 1,
          `the transaction ${m.transactionID} (settled ${m.day}) is listed ${listed.length} times in the file of ${from} to ${to} (${rows.length} rows), once expected`,
        );
        const row = listed[0]!;
        expect(
          row.transactionAmount === m.amount,
          `the settlement row of ${m.transactionID} says ${row.transactionAmount}, ${m.amount} was settled`,
        );
        expect(
          row.settlementDate === undefined || row.settlementDate === m.day,
          `the settlement row of ${m.transactionID} is dated ${row.settlementDate}, its answer said it settles on ${m.day}`,
        );
      }
    },
    { alone: true },
  ),
  scenario(
    'processVoid',
    ['Direct API'],
    'a voided authorisation refuses captures, refunds and a second void',
    async (g) => {
      const auth = await pay(g.processAuth, '9.00');
      expect(isApproved(auth), notApproved('processAuth', auth));
      const voided = await g.processVoid({ transactionID: auth.transactionID });
      expect(isApproved(voided), notApproved('processVoid', voided));
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
      const sale = await pay(g.processCard, '8.00', { transactionReferenceID: reference });
      expect(isApproved(sale), notApproved('processCard', sale));
      const refund = await g.refundCard({
        transactionID: sale.transactionID,
        transactionAmount: '3.00',
        transactionCurrency: 'AUD',
        refundAmount: '3.00',
      });
      expect(isApproved(refund), notApproved('refundCard', refund));
      for (const by of [{ transactionID: sale.transactionID }, { transactionReferenceID: reference }]) {
        const found = await g.queryCard(by);
        expect(isApproved(found), `queryCard ${show(by)}: ${show(found)}`);
        expect(
          found.transactionID === sale.transactionID &&
            found.transactionAmount === '8.00' &&
            found.refundedAmount === '3.00',
          `queryCard ${show(by)} answered transactionID ${found.transactionID}, transactionAmount ${found.transactionAmount}, refundedAmount ${found.refundedAmount}: expected ${sale.transactionID}, 8.00 and 3.00 (a purchase of 8.00 refunded 3.00)`,
        );
      }
    },
  ),
  scenario('refundCard', ['Direct API'], 'a purchase refunded in full refuses a further refund', async (g) => {
    const sale = await pay(g.processCard, '6.00');
    expect(isApproved(sale), notApproved('processCard', sale));
    const refund = await g.refundCard({
      transactionID: sale.transactionID,
      transactionAmount: '6.00',
      transactionCurrency: 'AUD',
      refundAmount: '6.00',
    });
    expect(isApproved(refund), notApproved('refundCard', refund));
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
      expect(isApproved(added), notApproved('addCard', added));
      const info = await g.token.cardInfo({ cardID: added.cardID, cardKey: added.cardKey });
      expect(isApproved(info), notApproved('cardInfo', info));
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
      expect(isApproved(changed), notApproved('changeExpiry', changed));
      const after = await g.token.cardInfo({ cardID: added.cardID, cardKey: added.cardKey });
      expect(
        isApproved(after) && after.cardExpiryMonth === '06' && after.cardExpiryYear === '31',
        `after changeExpiry cardInfo shows ${show(after)}`,
      );
    },
  ),
  scenario(
    'getPayId',
    ['PayID'],
    'Get PayID answers 201 with the PayID as registered, and its new name once updated',
    async (g, ctx) => {
      const payId = `ct-${Date.now()}@merchant.payid.test`;
      const name = `Contract ${payId.slice(3, 16)}`;
      const created = await g.payid.create({ payId, name });
      expect(isApproved(created), notApproved('createPayId', created));
      const op = operations.find((o) => o.operationId === 'getPayId')!;
      const read = async (expected: string) => {
        const a = await send(ctx.base, { op, params: { payId } }, ctx.creds);
        const problem = judge(op, undefined, a, ctx, { payId });
        expect(!problem, `Get PayID: ${problem}`);
        expect(a.status === 201, `HTTP ${a.status}, Get PayID answers 201`);
        const r = a.json?.result;
        expect(
          r?.payId === payId && r?.name === expected,
          `Get PayID ${payId} answered ${show(r)}: registered as ${show({ payId, name: expected })}`,
        );
      };
      await read(name);
      const renamed = `${name} (renamed)`;
      const updated = await g.payid.update(payId, { name: renamed });
      expect(isApproved(updated), notApproved('updatePayId', updated));
      await read(renamed);
    },
  ),
  scenario(
    'refundPayIdTransaction',
    ['PayID'],
    'A payment to a new PayID is refunded in parts, and never past what it received',
    async (g) => {
      // A PayID of its own, made by this run: a payment the suite refunded on an earlier run against
      // the same server (the spec example's PayID) has nothing left to refund.
      const payId = `ct-refund-${Date.now()}@merchant.payid.test`;
      const created = await g.payid.create({ payId, name: 'Contract refunds' });
      expect(isApproved(created), notApproved('createPayId', created));
      const listed = await g.payid.listTransactions(payId, {});
      expect(isApproved(listed), notApproved('listPayIdTransactions', listed));
      const payment = 'result' in listed ? listed.result.transactions[0] : undefined;
      if (!payment)
        return {
          skip: `the server lists no payment to the new PayID ${payId}: a refund needs one received (the sandbox makes one when a PayID is registered)`,
        };
      const cents = Math.round(Number(payment.amount) * 100);
      if (cents < 2) return { skip: `the payment to ${payId} is ${payment.amount}: too small to refund in two parts` };
      const first = Math.floor(cents / 2);
      const part = await g.payid.refundTransaction(payment.transactionId, {
        amount: first / 100,
        reason: 'Contract, part',
      });
      expect(isApproved(part), `refundPayIdTransaction of ${first / 100} of ${payment.amount}: ${show(part)}`);
      // One cent more than what is left: refused, and nothing refunded by it.
      const over = (cents - first + 1) / 100;
      const past = await g.payid.refundTransaction(payment.transactionId, { amount: over, reason: 'Contract, past' });
      expect(
        code(past) < 0,
        `refundPayIdTransaction of ${over}, past the ${(cents - first) / 100} left of ${payment.amount}, answered ${show(past)}`,
      );
      const rest = await g.payid.refundTransaction(payment.transactionId, {
        amount: (cents - first) / 100,
        reason: 'Contract, the rest',
      });
      expect(isApproved(rest), `refundPayIdTransaction of the ${(cents - first) / 100} left: ${show(rest)}`);
    },
  ),
];

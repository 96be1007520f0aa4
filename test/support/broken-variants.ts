// Broken variants of the sandbox, one rule broken in each, for measuring what the contract-test suite
// catches. A break is either a change of what the sandbox answers (made by a proxy in front of it, as a
// faulty implementation would answer) or a change of what it does (a wrapper around its handlers).
import http from 'node:http';
import { unzipSync, zipSync } from 'fflate';
import type { ContractOperation } from '../../generated/operations.ts';
import { instantOf, wallTime } from '../../runtime/gateway-time.ts';
import { parseCsv } from '../../runtime/settlement.ts';
import { storeAccounts } from '../../sandbox/accounts.ts';
import { createSandbox, sandboxHandlers, type RunningSandbox } from '../../sandbox/index.ts';
import { chooseMethod, route } from '../../server-stubs/core/router.ts';
import {
  createGateway,
  createNodeServer,
  serverDefaults,
  type GatewayHandlers,
  type HandlerContext,
} from '../../server-stubs/index.ts';

type Json = Record<string, any>;
type Handlers = GatewayHandlers<HandlerContext>;

export interface Break {
  name: string;
  kind: 'shape' | 'echo' | 'hash' | 'arithmetic' | 'state' | 'refusal' | 'time' | 'credentials';
  /** The operations (or tags) whose checks are run against it. */
  only: string[];
  /** Rewrites an answer: the new JSON, or a new status and JSON. */
  answer?: (
    op: ContractOperation,
    sent: Json | undefined,
    got: Json,
  ) => Json | { status: number; json: Json } | undefined;
  /** Rewrites a binary answer (a zip), given at `now` on the sandbox clock. */
  bytes?: (op: ContractOperation, got: Uint8Array, now: Date) => Uint8Array | undefined;
  /** Changes what the sandbox does. */
  handlers?: (handlers: Handlers, sb: RunningSandbox) => Partial<Handlers>;
  /** The Sydney wall-clock time the broken sandbox runs at (default BROKEN_SANDBOX_TIME). */
  at?: string;
}

const approved = (got: Json) => Number(got.responseCode) === 0;
const when =
  (id: string, f: (sent: Json | undefined, got: Json) => Json | undefined) =>
  (op: ContractOperation, sent: Json | undefined, got: Json) =>
    op.operationId === id ? f(sent, got) : undefined;
const onApproved = (id: string, f: (got: Json, sent: Json | undefined) => Json) =>
  when(id, (sent, got) => (approved(got) ? f(got, sent) : undefined));
/** A void or refund approved where the sandbox refused it: what a broken server answers instead. */
const approvedReversal = (sent: Json | undefined): Json => ({
  responseCode: '0',
  responseMessage: 'Transaction approved',
  transactionID: String(sent?.transactionID),
  authCode: '1',
  authResponseCode: '00',
  authMessage: 'Approved',
});
const refusal =
  (f: (got: Json) => Json | { status: number; json: Json } | undefined) =>
  (_op: ContractOperation, _sent: Json | undefined, got: Json) =>
    Number(got.responseCode) < 0 ? f(got) : undefined;

function rezipSettlement(got: Uint8Array, edit: (rows: string[][]) => string[][]): Uint8Array {
  const [name, bytes] = Object.entries(unzipSync(got))[0]!;
  const rows = edit(parseCsv(new TextDecoder().decode(bytes)));
  return zipSync({ [name]: new TextEncoder().encode(`${rows.map((r) => r.join(',')).join('\n')}\n`) });
}

/** A Sydney wall-clock time written as UTC's instead (what a server that ignores x-time answers). */
const sydneyAsUtc = (wall: string) => wallTime(instantOf(wall, 'Australia/Sydney'), 'UTC');
const dayAfter = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

/** What a server answers to credentials it does not know. */
const credentialRefusal = { responseCode: '-1', responseMessage: 'Invalid authentication credentials' };

export const breaks: Break[] = [
  // Set-up: credentials the server refuses. The suite must stop, not report the refusals as passes.
  {
    name: 'a server without the partner account (every /partner request refused -1)',
    kind: 'credentials',
    only: ['addMerchant', 'updateMerchant', 'checkMerchant'],
    answer: (op) => (op.path === '/partner' ? credentialRefusal : undefined),
  },
  {
    name: "a server that refuses the merchant's API key",
    kind: 'credentials',
    only: ['processCard'],
    answer: (op) => (op.path === '/post' && op.operationId !== 'getSurcharge' ? credentialRefusal : undefined),
  },
  {
    name: 'a server that refuses the access tokens it issued',
    kind: 'credentials',
    only: ['getSurcharge'],
    answer: (_op, sent) => (sent?.accessToken ? credentialRefusal : undefined),
  },
  {
    name: 'a server that refuses every header hash',
    kind: 'credentials',
    only: ['listPayIds'],
    answer: (op) =>
      op.headers ? { responseCode: -1, responseMessage: 'Invalid authentication credentials' } : undefined,
  },
  // Value rules (x-time, x-settlement-date, x-settlement-file, x-attempts, x-rollup).
  {
    name: 'payout attempt times written in UTC, not Australian Eastern time',
    kind: 'time',
    only: ['getPayoutTransactionStatus'],
    answer: onApproved('getPayoutTransactionStatus', (g) => ({
      ...g,
      result: {
        ...g.result,
        payouts: g.result.payouts.map((p: Json) => ({
          ...p,
          createdAt: sydneyAsUtc(p.createdAt),
          lastUpdated: sydneyAsUtc(p.lastUpdated),
        })),
      },
    })),
  },
  {
    name: 'a settlement file that lists a row not settled yet (dated tomorrow)',
    kind: 'time',
    only: ['getSettlement'],
    bytes: (op, got, now) =>
      op.operationId === 'getSettlement'
        ? rezipSettlement(got, ([header, ...rows]) => {
            const at = header!.indexOf('settlementDate');
            const tomorrow = dayAfter(wallTime(now, 'Australia/Sydney').slice(0, 10));
            const row = rows[0] ? [...rows[0]] : header!.map(() => '');
            row[at] = tomorrow;
            return [header!, ...rows, row];
          })
        : undefined,
  },
  {
    // A server without a clock the suite may move, on a Saturday: the settlement scenario cannot read
    // Monday's file yet, and skips; this one lists Monday's rows already, and fails it.
    name: "a settlement file that lists a weekend's captures on Saturday, before their Monday",
    kind: 'time',
    only: ['getSettlement'],
    at: '2026-11-28 13:00:00',
    handlers: (h, sb) => ({
      getSettlement: (input, context) => {
        // Its "today" read three days on: Monday's rows are listed.
        sb.clock.advanceDays(3);
        try {
          return h.getSettlement(input, context);
        } finally {
          sb.clock.advanceDays(-3);
        }
      },
    }),
  },
  {
    name: "a purchase's authSettledDate a day late",
    kind: 'time',
    only: ['processCard'],
    answer: onApproved('processCard', (g) =>
      g.authSettledDate ? { ...g, authSettledDate: dayAfter(g.authSettledDate) } : g,
    ),
  },
  {
    name: 'a payout summary completed while a transaction is pending',
    kind: 'time',
    only: ['createPayouts', 'getPayoutStatus'],
    answer: onApproved('createPayouts', (g) => ({ ...g, result: { ...g.result, status: 'completed' } })),
  },
  // Shapes: answers a schema refuses, reached through the stateful scenarios too.
  {
    name: 'capture result carries a field beyond its list',
    kind: 'shape',
    only: ['processCapture'],
    answer: onApproved('processCapture', (g) => ({ ...g, cardType: 'visa' })),
  },
  {
    name: "stored card's cardAdded not YYYY-MM-DD HH:MM:SS",
    kind: 'shape',
    only: ['cardInfo'],
    answer: onApproved('cardInfo', (g) => ({ ...g, cardAdded: String(g.cardAdded).replace(' ', 'T') })),
  },
  {
    name: 'purchase amount as a JSON number',
    kind: 'shape',
    only: ['processCard'],
    answer: onApproved('processCard', (g) => ({ ...g, transactionAmount: Number(g.transactionAmount) })),
  },
  {
    name: 'surcharge total as a JSON number',
    kind: 'shape',
    only: ['getSurcharge'],
    answer: onApproved('getSurcharge', (g) => ({ ...g, totalAmount: Number(g.totalAmount) })),
  },
  {
    name: 'addCard answers no ivrCardID',
    kind: 'shape',
    only: ['addCard'],
    answer: onApproved('addCard', ({ ivrCardID: _gone, ...g }) => g),
  },
  {
    // The real service's queryCard carries the bank's fields (transactionStatus is the sandbox's own, optional).
    name: 'queryCard answers no receiptNo',
    kind: 'shape',
    only: ['queryCard'],
    answer: onApproved('queryCard', ({ receiptNo: _gone, ...g }) => g),
  },
  {
    name: 'PayTo payment answers no transaction status',
    kind: 'shape',
    only: ['createPayToPayment', 'getPayToPaymentStatus'],
    answer: onApproved('createPayToPayment', (g) => ({
      ...g,
      result: { ...g.result, transaction: { id: g.result.transaction.id } },
    })),
  },
  {
    name: 'Get PayID answers 200, not 201',
    kind: 'shape',
    only: ['getPayId'],
    answer: (op, _s, got) => (op.operationId === 'getPayId' && approved(got) ? { status: 200, json: got } : undefined),
  },
  // Echoes.
  {
    name: 'an unsent custom field echoed as "" instead of []',
    kind: 'echo',
    only: ['processCard'],
    answer: onApproved('processCard', (g, s) => (s?.custom2 === undefined ? { ...g, custom2: '' } : g)),
  },
  {
    name: 'a sent custom field echoed changed',
    kind: 'echo',
    only: ['processCard', 'processAuth'],
    answer: onApproved('processAuth', (g) =>
      typeof g.custom1 === 'string' ? { ...g, custom1: `${g.custom1}!` } : { ...g, custom1: 'x' },
    ),
  },
  {
    name: 'masked number with last four digits not the card’s',
    kind: 'echo',
    only: ['processCard'],
    answer: onApproved('processCard', (g) => ({
      ...g,
      paymentCardNumber: `${String(g.paymentCardNumber).slice(0, 12)}0000`,
    })),
  },
  {
    name: 'masked number with first six digits not the card’s',
    kind: 'echo',
    only: ['processCard'],
    answer: onApproved('processCard', (g) => ({
      ...g,
      paymentCardNumber: `411111${String(g.paymentCardNumber).slice(6)}`,
    })),
  },
  {
    name: 'transactionReferenceID not echoed as sent',
    kind: 'echo',
    only: ['processCard'],
    answer: onApproved('processCard', (g) => ({ ...g, transactionReferenceID: 'REF-OTHER' })),
  },
  {
    name: 'transactionAmount not echoed as sent',
    kind: 'echo',
    only: ['processCard'],
    answer: onApproved('processCard', (g) => ({ ...g, transactionAmount: '0.01' })),
  },
  {
    name: 'surcharge quote for another amount',
    kind: 'echo',
    only: ['getSurcharge'],
    answer: onApproved('getSurcharge', (g) => ({
      ...g,
      transactionAmount: '1.00',
      totalAmount: (1 + Number(g.surchargeAmount)).toFixed(2),
    })),
  },
  {
    name: 'direct debit authorisation echoes another BSB',
    kind: 'echo',
    only: ['processDDebitAuth'],
    answer: onApproved('processDDebitAuth', (g) => ({ ...g, paymentAccountBSB: '000000' })),
  },
  // Hashes.
  {
    name: 'customHash not by its recipe',
    kind: 'hash',
    only: ['processCard'],
    answer: onApproved('processCard', (g) => ({ ...g, customHash: '0'.repeat(32) })),
  },
  {
    name: 'customHash of a direct debit authorisation not by its recipe',
    kind: 'hash',
    only: ['processDDebitAuth'],
    answer: onApproved('processDDebitAuth', (g) => ({ ...g, customHash: 'f'.repeat(32) })),
  },
  {
    name: 'the direct debit fingerprint hash not by its recipe',
    kind: 'hash',
    only: ['processDDebitAuth'],
    answer: onApproved('processDDebitAuth', (g) => ({ ...g, hash: 'a'.repeat(32) })),
  },
  // Arithmetic.
  {
    name: 'surcharge total is not amount + surcharge',
    kind: 'arithmetic',
    only: ['getSurcharge'],
    answer: onApproved('getSurcharge', (g) => ({ ...g, totalAmount: (Number(g.totalAmount) + 0.01).toFixed(2) })),
  },
  {
    name: 'a capture beyond the authorisation approved',
    kind: 'arithmetic',
    only: ['processCapture'],
    answer: when('processCapture', (_s, g) =>
      /greater than/.test(String(g.responseMessage))
        ? {
            responseCode: '0',
            responseMessage: 'Transaction approved',
            transactionID: '1336-00000000-0000-0000-0000-000000000001',
            authCode: '1',
            authResponseCode: '00',
            authMessage: 'Approved',
            receiptNo: '1',
          }
        : undefined,
    ),
  },
  {
    // Each capture within the authorisation, but together beyond it (a helper's server passed
    // the suite so: the scenario tried one capture of 40.01 only).
    name: 'captures that add up beyond the authorisation approved',
    kind: 'arithmetic',
    only: ['processCapture'],
    answer: when('processCapture', (s, g) =>
      /greater than/.test(String(g.responseMessage)) && Number(s?.captureAmount) <= Number(s?.transactionAmount)
        ? {
            responseCode: '0',
            responseMessage: 'Transaction approved',
            transactionID: '1336-00000000-0000-0000-0000-000000000003',
            authCode: '1',
            authResponseCode: '00',
            authMessage: 'Approved',
            receiptNo: '1',
          }
        : undefined,
    ),
  },
  {
    name: 'a captured authorisation voided',
    kind: 'state',
    only: ['processCapture'],
    answer: when('processVoid', (s, g) =>
      /has been captured/.test(String(g.responseMessage)) ? approvedReversal(s) : undefined,
    ),
  },
  {
    name: 'a refund beyond the capture approved',
    kind: 'arithmetic',
    only: ['processCapture', 'refundCard'],
    answer: when('refundCard', (_s, g) =>
      /greater than the amount captured/.test(String(g.responseMessage))
        ? {
            responseCode: '0',
            responseMessage: 'Transaction approved',
            transactionID: '1336-00000000-0000-0000-0000-000000000002',
            authCode: '1',
            authResponseCode: '00',
            authMessage: 'Approved',
          }
        : undefined,
    ),
  },
  {
    name: 'settlement row with another amount',
    kind: 'arithmetic',
    only: ['getSettlement'],
    bytes: (op, got) =>
      op.operationId === 'getSettlement'
        ? rezipSettlement(got, (rows) =>
            rows.map((r, i) => (i === 0 ? r : r.map((v) => (/^\d+\.\d\d$/.test(v) ? '0.01' : v)))),
          )
        : undefined,
  },
  {
    // Completeness beyond one row: the newest transaction is listed, those before it are not.
    name: 'a settlement file that lists only its last row',
    kind: 'arithmetic',
    only: ['getSettlement'],
    bytes: (op, got) =>
      op.operationId === 'getSettlement'
        ? rezipSettlement(got, ([header, ...rows]) => [header!, ...rows.slice(-1)])
        : undefined,
  },
  {
    name: 'settlement file without the transactions',
    kind: 'arithmetic',
    only: ['getSettlement'],
    bytes: (op, got) =>
      op.operationId === 'getSettlement' ? rezipSettlement(got, (rows) => rows.slice(0, 1)) : undefined,
  },
  // State.
  {
    name: 'the card key never rotates',
    kind: 'state',
    only: ['tokenProcessCard'],
    handlers: (h, sb) => ({
      tokenProcessCard: async (input, context) => {
        const card = await sb.store.get('SELECT card_key FROM cards WHERE card_id = ?', input.body.cardID);
        const result = await h.tokenProcessCard(input, context);
        if (card)
          await sb.store.run('UPDATE cards SET card_key = ? WHERE card_id = ?', card.card_key, input.body.cardID);
        return result;
      },
    }),
  },
  {
    // Seed §4.2: a result of responseCode >= 0 replaces the key; this one keeps it on a decline.
    name: 'a declined token purchase (responseCode above 0) keeps the old key',
    kind: 'state',
    only: ['tokenProcessCard'],
    handlers: (h, sb) => ({
      tokenProcessCard: async (input, context) => {
        const card = await sb.store.get('SELECT card_key FROM cards WHERE card_id = ?', input.body.cardID);
        const result = (await h.tokenProcessCard(input, context)) as Json;
        if (card && Number(result.responseCode) > 0)
          await sb.store.run('UPDATE cards SET card_key = ? WHERE card_id = ?', card.card_key, input.body.cardID);
        return result as never;
      },
    }),
  },
  {
    name: 'a refused token purchase rotates the key anyway',
    kind: 'state',
    only: ['tokenProcessCard'],
    handlers: (h, sb) => ({
      tokenProcessCard: async (input, context) => {
        const result = (await h.tokenProcessCard(input, context)) as Json;
        if (Number(result.responseCode) < 0 && input.body.cardKeyReplace)
          await sb.store.run(
            'UPDATE cards SET card_key = ? WHERE card_id = ?',
            input.body.cardKeyReplace,
            input.body.cardID,
          );
        return result as never;
      },
    }),
  },
  {
    name: 'a voided authorisation can still be captured',
    kind: 'state',
    only: ['processVoid'],
    handlers: (h, sb) => ({
      processCapture: async (input, context) => {
        await sb.store.run(
          "UPDATE transactions SET status = 'preauth' WHERE id = ? AND status = 'void'",
          input.body.transactionID,
        );
        return h.processCapture(input, context);
      },
    }),
  },
  {
    name: 'a second void approved',
    kind: 'state',
    only: ['processVoid'],
    answer: when('processVoid', (s, g) =>
      /already been reversed/.test(String(g.responseMessage)) ? approvedReversal(s) : undefined,
    ),
  },
  {
    name: 'a purchase refunded in full refunds again',
    kind: 'state',
    only: ['refundCard'],
    answer: when('refundCard', (s, g) =>
      Number(g.responseCode) < 0 && /amount captured/.test(String(g.responseMessage)) ? approvedReversal(s) : undefined,
    ),
  },
  {
    name: 'cardInfo shows other last digits than the card stored',
    kind: 'state',
    only: ['cardInfo'],
    answer: onApproved('cardInfo', (g) => ({ ...g, cardNumberLast: '9999' })),
  },
  {
    name: 'changeExpiry answers success and changes nothing',
    kind: 'state',
    only: ['cardInfo'],
    handlers: () => ({ changeExpiry: () => ({ responseCode: '0', responseMessage: 'Operation successful' }) }),
  },
  {
    name: 'payout attempts in the wrong order',
    kind: 'state',
    only: ['getPayoutTransactionStatus'],
    answer: onApproved('getPayoutTransactionStatus', (g) => ({
      ...g,
      result: { ...g.result, payouts: [...g.result.payouts].reverse() },
    })),
  },
  {
    name: 'Get PayID answers another name than the one registered',
    kind: 'state',
    only: ['getPayId'],
    answer: (op, _s, got) =>
      op.operationId === 'getPayId' && approved(got)
        ? { status: 201, json: { ...got, result: { ...got.result, name: 'Someone Else' } } }
        : undefined,
  },
  {
    name: 'PayTo status not the payment’s',
    kind: 'state',
    only: ['getPayToPaymentStatus'],
    answer: onApproved('getPayToPaymentStatus', (g) => ({
      ...g,
      result: { ...g.result, status: g.result.status === 'approved' ? 'declined' : 'approved' },
    })),
  },
  // Refusals.
  {
    // Every form of an operation is held to its success (state.ts): the card-data purchases pass.
    name: 'every external-3DS purchase refused (-2), the other forms approved',
    kind: 'refusal',
    only: ['processCard'],
    answer: when('processCard', (s) =>
      s?.threeDSCavv !== undefined && s?.paymentCardNumber !== undefined
        ? { responseCode: '-2', responseMessage: "Field 'threeDSCavv' is invalid: external 3DS is not taken" }
        : undefined,
    ),
  },
  {
    // A decline keeps the result's shape: only a check that asks for the approval it is named after
    // (its success answer reached) tells it from one.
    name: 'every payframe purchase declined (responseCode 2), the other forms approved',
    kind: 'refusal',
    only: ['payframeProcessCard', 'processCard'],
    answer: (op, sent, got) =>
      (op.operationId === 'payframeProcessCard' || (op.operationId === 'processCard' && sent?.payframeToken)) &&
      approved(got)
        ? {
            ...got,
            responseCode: '2',
            responseMessage: 'Transaction declined',
            authCode: '',
            authResponseCode: '05',
            authMessage: 'Do not honour',
          }
        : undefined,
  },
  {
    name: 'a missing field refused with -2 instead of -3',
    kind: 'refusal',
    only: ['processCapture'],
    answer: refusal((g) => (g.responseCode === '-3' ? { ...g, responseCode: '-2' } : undefined)),
  },
  {
    name: 'bad credentials refused with -2 instead of -1',
    kind: 'refusal',
    only: ['processCapture'],
    answer: refusal((g) => (g.responseCode === '-1' ? { ...g, responseCode: '-2' } : undefined)),
  },
  {
    name: 'a refusal answered with HTTP 500',
    kind: 'refusal',
    only: ['processCapture'],
    answer: refusal((g) => ({ status: 500, json: g })),
  },
  {
    name: 'a refusal that does not name the field',
    kind: 'refusal',
    only: ['processCapture'],
    answer: refusal((g) => ({ ...g, responseMessage: 'Invalid request' })),
  },
  {
    name: 'an invalid field approved',
    kind: 'refusal',
    only: ['getSurcharge'],
    answer: when('getSurcharge', (_s, g) =>
      g.responseCode === '-2'
        ? {
            responseCode: '0',
            responseMessage: 'Operation successful',
            transactionAmount: '1.00',
            surchargeAmount: '0.00',
            totalAmount: '1.00',
          }
        : undefined,
    ),
  },
];

/**
 * The instant every broken sandbox runs at (Sydney): a Tuesday morning, so that what a check meets
 * never depends on the day or hour the tests run (transactions settle the same day, their file can
 * be read at once). The pinned-instants test (test/contract-suite/pinned-instants.test.ts) holds the
 * suite to the other hours.
 */
export const BROKEN_SANDBOX_TIME = '2026-12-01 10:00:00';

/** The sandbox with one break: a proxy in front for answers, wrapped handlers for behaviour. */
export async function brokenSandbox(b: Break): Promise<{ server: http.Server; close(): void }> {
  const sb = await createSandbox({ dbPath: ':memory:', env: {} });
  sb.clock.advance(instantOf(b.at ?? BROKEN_SANDBOX_TIME, 'Australia/Sydney').getTime() - sb.clock.now().getTime());
  const handlers = sandboxHandlers(sb);
  const gateway = createGateway({
    accounts: storeAccounts(sb.store, sb.clock),
    responseValidation: 'log', // a faulty implementation's answers reach its clients
    handlers: { ...handlers, ...b.handlers?.(handlers, sb) },
  });
  const inner = createNodeServer(gateway);
  inner.listen(0, '127.0.0.1');
  // Idle connections kept as the stubs' server keeps them (65 s), not Node's 5 s: the suite's client,
  // its idle timer late on a loaded machine, reused a connection the proxy was closing and got
  // ECONNRESET (issue 44: 'nothing broken' failed so under load).
  const server = http.createServer({ keepAliveTimeout: serverDefaults.keepAliveTimeout }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const address = inner.address() as { port: number };
      const upstream = http.request(
        { host: '127.0.0.1', port: address.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (c: Buffer) => parts.push(c));
          answer.on('end', () => {
            let body: Buffer = Buffer.concat(parts);
            let status = answer.statusCode ?? 500;
            const type = answer.headers['content-type'] ?? '';
            let sent: Json | undefined;
            try {
              sent = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
            } catch {
              sent = undefined;
            }
            const routed = route(req.method ?? 'GET', (req.url ?? '/').split('?')[0]!);
            const chosen =
              'match' in routed ? chooseMethod(routed.match.candidates, sent, routed.match.pathMethod) : undefined;
            const op = chosen && 'op' in chosen ? chosen.op : undefined;
            if (op && type.startsWith('application/json') && b.answer) {
              const changed = b.answer(op, sent, JSON.parse(body.toString('utf8')));
              if (changed) {
                const next = 'status' in changed && 'json' in changed ? changed : { status, json: changed };
                status = next.status as number;
                body = Buffer.from(JSON.stringify(next.json));
              }
            } else if (op && b.bytes && !type.startsWith('application/json')) {
              const changed = b.bytes(op, new Uint8Array(body), sb.clock.now());
              if (changed) body = Buffer.from(changed);
            }
            // Dated on the sandbox clock, as the sandbox dates its answers.
            const date = sb.clock.now().toUTCString();
            res.writeHead(status, { 'content-type': type, 'content-length': body.length, date });
            res.end(body);
          });
        },
      );
      upstream.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      upstream.end(raw);
    });
  });
  return {
    server,
    close: () => {
      inner.close();
      void sb.close();
    },
  };
}

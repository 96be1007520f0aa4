// Finding: an answer that broke the contract was found only after its change had been committed
// (a card number in custom1: purchase stored, then 500; every later queryCard of it 500). The
// handler and the check of its answer now run in one store transaction.
import type { SqliteStore } from '../../sandbox/store-sqlite.ts';
import { afterAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../server-stubs/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { counts, hardeningSandbox, purchase, send, signed } from './support.ts';

const sb = await hardeningSandbox();
afterAll(() => sb.close());

describe('an answer is checked before its change is committed', () => {
  it('a handler that writes and then answers outside the contract leaves nothing written', async () => {
    const written: string[] = [];
    const handlers = echoHandlers(undefined, (op, result) => {
      written.push(op.operationId);
      return op.operationId === 'processCapture' ? { ...result, authCode: 42 } : result;
    });
    const gateway = createGateway({
      handlers,
      accounts,
      transaction: <T>(work: () => T): T => {
        const before = written.length;
        try {
          return work();
        } catch (error) {
          written.length = before; // the store's rollback
          throw error;
        }
      },
    });
    const op = operation('processCapture');
    const response = await gateway.handle(buildRequest(op, { body: requestExamples(op)[0]!.value }));
    expect(JSON.parse(String(response.body)).responseCode).toBe('-4');
    expect(written).toEqual([]);
  });

  it('a refusal stores nothing, even when the handler wrote before refusing', async () => {
    const written: string[] = [];
    const handlers = echoHandlers(undefined, (op, result) => {
      written.push(op.operationId);
      return op.operationId === 'processCapture'
        ? { responseCode: '-2', responseMessage: "Field 'captureAmount' is invalid: too much" }
        : result;
    });
    const gateway = createGateway({
      handlers,
      accounts,
      transaction: <T>(work: () => T): T => {
        const before = written.length;
        try {
          return work();
        } catch (error) {
          written.length = before;
          throw error;
        }
      },
    });
    const op = operation('processCapture');
    const response = await gateway.handle(buildRequest(op, { body: requestExamples(op)[0]!.value }));
    expect(JSON.parse(String(response.body)).responseCode).toBe('-2');
    expect(written).toEqual([]);
  });

  // A constraint failure as a trigger raises it, standing in for another instance's insert that
  // committed between the handler's check and its own insert.
  const constraintFailure = async (column: string, body: Record<string, unknown>) => {
    (sb.store as SqliteStore).database.db.exec(
      `CREATE TEMP TRIGGER refuse_payids BEFORE INSERT ON payids BEGIN SELECT RAISE(ABORT, 'UNIQUE constraint failed: ${column}'); END;`,
    );
    try {
      const before = await counts(sb);
      const answer = await send(sb, signed('createPayId', body));
      expect(answer.status).toBeLessThan(300);
      expect(await counts(sb)).toEqual(before);
      return answer.json;
    } finally {
      (sb.store as SqliteStore).database.db.exec('DROP TRIGGER refuse_payids');
    }
  };

  it('a store constraint failure is a refusal, not a 500: the one its column has, or a general one', async () => {
    expect(await constraintFailure('payids.pay_id', { payId: 'race@merchant.payid.test', name: 'Jane' })).toEqual({
      responseCode: -2,
      responseMessage: "Field 'payId' is invalid: already registered",
    });
    expect(await constraintFailure('payids.reference', { payId: 'ref@merchant.payid.test', name: 'Jane' })).toEqual({
      responseCode: -2,
      responseMessage: 'The request conflicts with a stored record',
    });
  });

  it('a purchase whose answer would carry a card number is not stored', async () => {
    const before = await counts(sb);
    const answer = await send(sb, signed('processCard', purchase({ custom1: '4564710000000004' })));
    expect(Number(answer.json.responseCode), answer.json.responseMessage).toBeLessThan(0);
    expect(await counts(sb)).toEqual(before);
  });
});

describe('a failure outside the handler', () => {
  it('is logged and answered -4, not left to the adapter as a silent 500', async () => {
    const logged: string[] = [];
    const gateway = createGateway({
      handlers: echoHandlers(),
      accounts: {
        find: () => {
          throw new Error('the accounts database is down');
        },
        findByAccessToken: () => undefined,
      },
      logger: { warn() {}, error: (message, fields) => logged.push(`${message}: ${String(fields?.error)}`) },
    });
    const op = operation('processCapture');
    const response = await gateway.handle(buildRequest(op, { body: requestExamples(op)[0]!.value }));
    expect(response.status).toBe(500);
    expect(JSON.parse(String(response.body))).toEqual({
      responseCode: '-4',
      responseMessage: 'Internal gateway error',
    });
    expect(logged).toEqual(['request failed: the accounts database is down']);
  });
});

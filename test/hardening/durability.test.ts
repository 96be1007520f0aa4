// Kept as tests, as the issue found them holding: no committed purchase lost across kill -9 under load
// (three rounds), and 200-way races on a card key rotation and on captures of one authorisation.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRequest, operation } from '../../contract/index.ts';
import { startSandboxProcess } from '../support/sandbox-process.ts';
import { hardeningSandbox, merchant, purchase, send, signed, storedCard } from './support.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-kill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// An account of its own, so that only this sandbox can approve its purchases: after a kill -9, a
// request not yet connected could reach another test's server that took the freed port, and that
// one (on the default account) would approve it into its own store.
const own = {
  merchantUUID: randomBytes(7).toString('hex').slice(0, 13),
  apiKey: Array.from(randomBytes(8), (b) => String.fromCharCode(97 + (b % 26))).join(''),
};

async function start(db: string): Promise<{ child: ChildProcess; base: string }> {
  return startSandboxProcess({
    PGW_DB: db,
    PGW_SANDBOX_MERCHANT_UUID: own.merchantUUID,
    PGW_SANDBOX_API_KEY: own.apiKey,
  });
}

async function post(base: string, operationId: string, body: Record<string, unknown>): Promise<any> {
  const r = signed(operationId, { ...body, ...own });
  const response = await fetch(base + r.url, {
    method: r.verb,
    headers: r.headers as Record<string, string>,
    body: r.body as string,
  });
  return response.json();
}

describe('durability and races', () => {
  it('no answered purchase is lost across three kill -9 under load', async () => {
    const db = path.join(dir, 'kill.db');
    const answered: string[] = [];
    const otherAnswers: string[] = [];
    for (let round = 0; round < 3; round++) {
      const { child, base } = await start(db);
      // Killed once ten of the round's purchases are answered, the others still in flight: by
      // readiness, not after a fixed time (150 ms was too short on a loaded machine: three rounds, no
      // answer at all, nothing to check; issue 44).
      let approvedInRound = 0;
      let tenAnswered!: () => void;
      const ten = new Promise<void>((resolve) => (tenAnswered = resolve));
      const inflight = Array.from({ length: 120 }, (_, i) =>
        post(base, 'processCard', purchase({ transactionReferenceID: `K-${round}-${i}` })).then(
          (a) => {
            if (a.responseCode === '0') {
              answered.push(a.transactionID);
              if (++approvedInRound === 10) tenAnswered();
            } else otherAnswers.push(`${a.responseCode} ${a.responseMessage}`);
          },
          () => undefined, // killed before answering: nothing was promised
        ),
      );
      // Every request settled before ten were approved: nothing more to wait for.
      await Promise.race([ten, Promise.all(inflight)]);
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await Promise.all(inflight);
      await exited;
    }
    // Another server's answer (a -1: it does not know this account) means a request reached a port
    // this sandbox had freed; it is not this sandbox's to keep.
    console.info(`kill -9 x3: ${answered.length} purchases approved, other answers: ${JSON.stringify(otherAnswers)}`);
    expect(answered.length).toBeGreaterThan(0);
    const { child, base } = await start(db);
    try {
      for (const id of answered) {
        const found = await post(base, 'queryCard', { method: 'queryCard', ...merchant, transactionID: id, hash: 'x' });
        expect(found, id).toMatchObject({ responseCode: '0' });
      }
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('200 token purchases at once with one cardKey: exactly one is processed; 200 captures never exceed the authorisation', async () => {
    const sb = await hardeningSandbox();
    const { cardID, cardKey } = await storedCard(sb);
    const tokenPurchase = (i: number) =>
      signed('tokenProcessCard', {
        method: 'processCard',
        ...merchant,
        transactionAmount: '1.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'x',
        cardID,
        cardKey,
        cardKeyReplace: `Replaced${String(i).padStart(8, '0')}`,
        hash: 'x',
      });
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => send(sb, tokenPurchase(i))));
    expect(results.filter((r) => r.json.responseCode === '0')).toHaveLength(1);
    const auth = (
      await send(sb, signed('processAuth', { ...purchase({ method: 'processAuth', transactionAmount: '100.00' }) }))
    ).json;
    const capture = () =>
      send(sb, buildRequest(operation('processCapture'), { body: signedCapture(auth.transactionID) }));
    const captures = await Promise.all(Array.from({ length: 200 }, capture));
    expect(captures.filter((c) => c.json.responseCode === '0')).toHaveLength(100);
    await sb.close();
  });
});

function signedCapture(transactionID: string) {
  return JSON.parse(
    String(
      signed('processCapture', {
        method: 'processCapture',
        ...merchant,
        transactionID,
        transactionAmount: '100.00',
        transactionCurrency: 'AUD',
        captureAmount: '1.00',
        hash: 'x',
      }).body,
    ),
  );
}

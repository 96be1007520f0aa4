// Findings: a processBatch zip of 150 KiB inflating to a 150 MB CSV ran the sandbox out of memory; a
// batchFile the schema accepts but that is not base64 threw inside authentication (a silent 500).
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_BATCH_CSV_BYTES } from '../../sandbox/handlers/batch.ts';
import { BATCH_HEADER, batchBody, counts, hardeningSandbox, send, signed } from './support.ts';
import { until } from '../support/until.ts';
import { repeatedLines, zipOne } from '../support/zip-bomb.ts';

const sb = await hardeningSandbox();
afterAll(() => sb.close());

describe('bounded work per request', () => {
  it('a zip bomb is refused with -2 naming batchFile before memory grows', async () => {
    // 150 MB of one repeated CSV line deflates to about 430 KiB (node:zlib at level 9; fflate's
    // zipSync made about 150 KiB of it, in 3.9 s of CPU where zlib takes 0.6 s).
    const csv = repeatedLines(150_000_000, BATCH_HEADER, 'R-1,5.00,AUD,Box,KOCI12345678,abcdefghijklmnop\n');
    const zip = zipOne('batch.csv', csv, 9);
    expect(zip.length).toBeLessThan(1_000_000);
    const before = await counts(sb);
    const rss = process.memoryUsage().rss;
    const answer = await send(
      sb,
      signed('processBatch', { ...batchBody(''), batchFile: Buffer.from(zip).toString('base64') }),
    );
    expect(answer.json).toEqual({
      responseCode: '-2',
      responseMessage: `Field 'batchFile' is invalid: its CSV must not inflate to more than ${MAX_BATCH_CSV_BYTES} bytes`,
    });
    // Bounded by the cap, not by the 150 MB the zip would inflate to (a loose bound: RSS is noisy).
    expect(process.memoryUsage().rss - rss).toBeLessThan(100_000_000);
    expect(await counts(sb)).toEqual(before);
  });

  it('a batchFile that is not base64 is refused with -2 naming it, not a 500', async () => {
    const request = signed('processBatch', { ...batchBody(''), batchFile: 'not base64!', fileHash: '0'.repeat(32) });
    const answer = await send(sb, request);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      responseCode: '-2',
      responseMessage: "Field 'batchFile' is invalid: must be base64",
    });
  });

  it('a card number in a batch line is refused naming batchFile, and nothing is stored', async () => {
    const before = await counts(sb);
    const answer = await send(
      sb,
      signed(
        'processBatch',
        batchBody(`${BATCH_HEADER}\nR-1,5.00,AUD,For 5555555555554444,KOCI12345678,abcdefghijklmnop\n`),
      ),
    );
    expect(answer.json).toEqual({
      responseCode: '-2',
      responseMessage: "Field 'batchFile' is invalid: line 1 must not hold a card number",
    });
    expect(await counts(sb)).toEqual(before);
  });
});

describe('a large batch runs in slices', () => {
  it('answers at once, runs in the background while other requests are answered, and survives a restart', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const { storedCard, purchase } = await import('./support.ts');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-batch-'));
    try {
      const file = path.join(dir, 'b.db');
      let s = await hardeningSandbox(file);
      const { cardID, cardKey } = await storedCard(s);
      const lines = Array.from({ length: 3000 }, (_, i) => `S-${i},1.00,AUD,Box,${cardID},${cardKey}`);
      const accepted = await send(s, signed('processBatch', batchBody(`${BATCH_HEADER}\n${lines.join('\n')}\n`)));
      expect(accepted.json.responseCode).toBe('0');
      const status = async () =>
        (await send(s, signed('retrieveBatchResponse', undefined, { params: { batchUUID: accepted.json.batchUUID } })))
          .json;
      const first = await status();
      expect(first.status).toBe('pending');
      expect(first.transactions.length).toBeLessThan(3000);
      // Another client is answered while the batch runs.
      expect((await send(s, signed('processCard', purchase()))).json.responseCode).toBe('0');
      // Stopped half-way, restarted on the same file: the batch goes on from where it was.
      await s.close();
      s = await hardeningSandbox(file);
      await until(async () => (await status()).status !== 'pending', 60_000, 25);
      const done = await status();
      expect(done.status).toBe('completed');
      expect(done.transactions.map((l: { transactionReferenceID: string }) => l.transactionReferenceID)).toEqual(
        lines.map((_, i) => `S-${i}`),
      );
      expect(done.transactions.every((l: { responseCode: string }) => l.responseCode === '0')).toBe(true);
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a large settlement file is written in slices', () => {
  it('yields to the event loop while 30,000 rows are written and scanned, and holds them all', async () => {
    const { readSettlement } = await import('../../runtime/settlement.ts');
    const s = await hardeningSandbox();
    const day = '2026-11-01';
    // The rows made in one statement, in order (one INSERT a row took 0.5 s of CPU).
    await s.store.run(
      `WITH RECURSIVE g(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i < 29999)
       INSERT INTO transactions (id, merchant_id, kind, status, response_code, response_message, amount, captured, currency, reference, product, card_type, masked_pan, expiry_month, expiry_year, auth_code, auth_response_code, auth_message, receipt_no, settled_date, custom, created_at)
       SELECT 't-' || i, '5265f8eed6a19', 'purchase', 'approved', 0, 'Transaction approved', 1234, 1234, 'AUD', 'R-' || i, 'Tea', 'visa', '456471XXXXXX0004', '02', '29', '123456', '00', 'Approved', '123456789', ?, '[]', ?
       FROM g`,
      day,
      `${day} 10:00:00`,
    );
    let ticks = 0;
    let done = false;
    const tick = () => {
      if (done) return;
      ticks++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const answer = await send(
      s,
      signed('getSettlement', {
        method: 'getSettlement',
        merchantUUID: '5265f8eed6a19',
        apiKey: 'ksmnwxab',
        settlementFrom: day,
        settlementTo: day,
        version: '1.6',
        hash: 'x',
      }),
    );
    done = true;
    expect(ticks).toBeGreaterThan(1);
    const file = readSettlement(answer.response.body as Uint8Array);
    expect(file.rows).toHaveLength(30_000);
    expect(file.rows.map((r) => r.transactionReferenceID).slice(0, 3)).toEqual(['R-0', 'R-1', 'R-2']);
    await s.close();
  });
});

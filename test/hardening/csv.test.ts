// Findings: retrieveBatch wrote its CSV unquoted, so one batch line could add a forged "approved"
// row; the settlement CSV left a leading = as it was (a formula to any spreadsheet).
import { afterAll, describe, expect, it } from 'vitest';
import { parseCsv, readSettlement } from '../../runtime/settlement.ts';
import { csvField } from '../../sandbox/csv.ts';
import { BATCH_HEADER, batchBody, hardeningSandbox, purchase, send, signed, storedCard } from './support.ts';

const sb = await hardeningSandbox();
afterAll(() => sb.close());

describe('CSV the sandbox writes', () => {
  it('retrieveBatch quotes a reference holding a line break: no forged row', async () => {
    const { cardID, cardKey } = await storedCard(sb);
    const forged = 'R1\n999,1336-forged,99.00,0,Transaction approved';
    const csv = `${BATCH_HEADER}\n"${forged}",5.00,AUD,Box,${cardID},${cardKey}\n"=HYPERLINK(""http://evil.test"",""x"")",5.00,AUD,Box,${cardID},${cardKey}\n`;
    const accepted = await send(sb, signed('processBatch', batchBody(csv)));
    expect(accepted.json.responseCode, accepted.json.responseMessage).toBe('0');
    const text = (
      await send(
        sb,
        signed('retrieveBatch', {
          method: 'retrieveBatch',
          merchantUUID: '5265f8eed6a19',
          apiKey: 'ksmnwxab',
          batchUUID: accepted.json.batchUUID,
        }),
      )
    ).response.body as string;
    const rows = parseCsv(text);
    expect(rows).toHaveLength(3);
    expect(rows[1]![0]).toBe(forged);
    expect(rows[2]![0]).toBe(`'=HYPERLINK("http://evil.test","x")`);
    expect(rows[1]![3]).toBe('0');
  });

  it('the settlement CSV neutralises formula-leading products', async () => {
    const products = ['=1+1', '+1+1', '-1+1', '@SUM(A1)', '\tTab', 'Plain, with comma'];
    let day = '';
    for (const p of products)
      day = (await send(sb, signed('processCard', purchase({ transactionProduct: p })))).json.authSettledDate;
    // A weekend's purchases settle on Monday: the file lists them once the sandbox clock is there.
    while (sb.clock.settlementToday() < day) sb.clock.advanceDays(1);
    const zip = (
      await send(
        sb,
        signed('getSettlement', {
          method: 'getSettlement',
          merchantUUID: '5265f8eed6a19',
          apiKey: 'ksmnwxab',
          settlementFrom: day,
          settlementTo: day,
        }),
      )
    ).response.body as Uint8Array;
    const seen = readSettlement(zip)
      .rows.map((r) => r.transactionProduct)
      .filter((p) => p !== 'Test' && p !== 'Box');
    expect(seen).toEqual(["'=1+1", "'+1+1", "'-1+1", "'@SUM(A1)", "'\tTab", 'Plain, with comma']);
  });

  it('leaves plain numbers, negative ones included, as they are', () => {
    expect(['-2', '+1.50', '12.34', 'a"b', 'x\r\ny'].map(csvField)).toEqual([
      '-2',
      '+1.50',
      '12.34',
      '"a""b"',
      '"x\r\ny"',
    ]);
  });
});

// Surcharge quotes (per-merchant, per-scheme rates, rounded half up to the cent) and settlement
// files: a real zip holding one CSV, whose columns are the spec's x-csv-columns for the version asked.
import { Zip, ZipDeflate } from 'fflate';
import { csvColumns } from '../../generated/spec-constants.ts';
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { cardType, luhn } from '../cards.ts';
import { invalid, ok, type Sandbox } from '../context.ts';
import { csvRows } from '../csv.ts';
import { fromCents, toCents } from '../money.ts';

type H = GatewayHandlers<HandlerContext>;

/** A settlement file is written a page of rows at a time, yielding after SLICE_MS of work. */
const PAGE_ROWS = 200;
const SLICE_MS = 10;

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

/** The sandbox's fee on settled card transactions, in basis points. */
const FEE_BP = 180;
const halfUp = (cents: number, bp: number) => Math.floor((cents * bp + 5000) / 10_000);

export function settlementHandlers(sb: Sandbox): Pick<H, 'getSurcharge' | 'getSettlement'> {
  const { store } = sb;
  return {
    getSurcharge: ({ body }, { account }) => {
      let type: string;
      if (body.cardID) {
        const row = store.get('SELECT card_type FROM cards WHERE merchant_id = ? AND card_id = ?', account.id, body.cardID);
        if (!row) return invalid('cardID', 'no such card');
        type = row.card_type;
      } else {
        if (!luhn(body.paymentCardNumber!)) return invalid('paymentCardNumber', 'fails the Luhn check');
        type = cardType(body.paymentCardNumber!);
      }
      const rate = store.get('SELECT basis_points FROM surcharge_rates WHERE merchant_id = ? AND card_type = ?', account.id, type);
      const cents = toCents(body.transactionAmount);
      const surcharge = halfUp(cents, Number(rate?.basis_points ?? 0));
      return { responseCode: '0', responseMessage: ok, transactionAmount: fromCents(cents), surchargeAmount: fromCents(surcharge), totalAmount: fromCents(cents + surcharge) };
    },
    getSettlement: async ({ body }, { account }) => {
      if (body.settlementTo < body.settlementFrom) return invalid('settlementTo', 'is before settlementFrom');
      const version = body.version ?? 'unversioned';
      const columns: readonly string[] = csvColumns.settlement[version];
      const values = (row: Record<string, any>): Record<string, string> => ({
        transactionID: row.id,
        transactionReferenceID: row.reference ?? '',
        status: row.status === 'void' ? 'void' : 'approved',
        transactionAmount: fromCents(row.amount),
        feeAmount: fromCents(halfUp(row.amount, FEE_BP)),
        transactionCurrency: row.currency,
        cardType: row.card_type,
        paymentCardNumber: row.masked_pan,
        settlementDate: row.settled_date,
        transactionProduct: row.product ?? '',
      });
      // Written in slices of at most SLICE_MS, yielding to the event loop between them: a page of
      // rows (read by key, so that no statement stays open across a yield), made CSV, deflated into
      // the zip as a stream. 100,000 rows held the loop for 2.9 s in one piece.
      const parts: Uint8Array[] = [];
      const zip = new Zip((error, chunk) => {
        if (error) throw error;
        parts.push(chunk);
      });
      const entry = new ZipDeflate('settlement.csv', { level: 6 });
      entry.mtime = new Date('2026-01-01T00:00:00Z');
      zip.add(entry);
      const encoder = new TextEncoder();
      entry.push(encoder.encode(`${columns.join(',')}\n`));
      // Day by day, and within a day by rowid (the order rows were written): the index on
      // (merchant_id, settled_date) then finds each page directly.
      const days = store.all("SELECT DISTINCT settled_date FROM transactions WHERE merchant_id = ? AND settled_date BETWEEN ? AND ? AND kind IN ('purchase', 'capture') ORDER BY settled_date", account.id, body.settlementFrom, body.settlementTo);
      // The days' query is a slice of its own (16 ms over 100,000 rows); each page then starts a slice
      // only while the slice has time left, so no slice runs a page past its end.
      const breathe = () => new Promise((resolve) => setImmediate(resolve));
      await breathe();
      let sliceEnd = performance.now() + SLICE_MS;
      for (const { settled_date: day } of days) {
        for (let after = -1; ; ) {
          if (performance.now() > sliceEnd) {
            await breathe();
            sliceEnd = performance.now() + SLICE_MS;
          }
          const rows = store.all(
            `SELECT rowid AS row_id, * FROM transactions WHERE merchant_id = ? AND settled_date = ? AND rowid > ? AND kind IN ('purchase', 'capture') ORDER BY rowid LIMIT ${PAGE_ROWS}`,
            account.id, day, after,
          );
          if (!rows.length) break;
          entry.push(encoder.encode(csvRows(columns, rows.map(values))));
          after = Number(rows.at(-1)!.row_id);
        }
      }
      entry.push(new Uint8Array(0), true);
      zip.end();
      return concat(parts);
    },
  };
}

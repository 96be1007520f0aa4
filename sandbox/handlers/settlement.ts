// Surcharge quotes (per-merchant, per-scheme rates, rounded half up to the cent) and settlement
// files: a real zip holding one CSV, whose columns are the spec's x-csv-columns for the version asked.
import { csvColumns, settlementDates } from '../../generated/spec-constants.ts';
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { cardType, luhn } from '../cards.ts';
import { ok, type Sandbox } from '../context.ts';
import { refused, sandboxRefusals as refusals } from '../refusals.ts';
import { fromCents, toCents } from '../money.ts';
import { csvLineWriter } from '../csv.ts';
import { zipCsvStream, zipTime } from '../settlement-export.ts';

type H = GatewayHandlers<HandlerContext>;

/** The sandbox's fee on settled card transactions, in basis points. */
const FEE_BP = 180;
const halfUp = (cents: number, bp: number) => Math.floor((cents * bp + 5000) / 10_000);

/**
 * Each column of the settlement file (x-csv-columns, any version): the store column its cell is made
 * from, and how.
 */
const SETTLEMENT_CELLS: Record<string, { reads: string; cell: (value: any) => string }> = {
  transactionID: { reads: 'id', cell: (id: string) => id },
  transactionReferenceID: { reads: 'reference', cell: (reference: string | null) => reference ?? '' },
  status: { reads: 'status', cell: (status: string) => (status === 'void' ? 'void' : 'approved') },
  transactionAmount: { reads: 'amount', cell: (cents: number) => fromCents(cents) },
  feeAmount: { reads: 'amount', cell: (cents: number) => fromCents(halfUp(cents, FEE_BP)) },
  transactionCurrency: { reads: 'currency', cell: (currency: string) => currency },
  cardType: { reads: 'card_type', cell: (type: string) => type },
  paymentCardNumber: { reads: 'masked_pan', cell: (masked: string) => masked },
  settlementDate: { reads: 'settled_date', cell: (day: string) => day },
  transactionProduct: { reads: 'product', cell: (product: string | null) => product ?? '' },
};

/** A merchant's settled card transactions between two days, in the settlement file's order: `reads`, the columns. */
const settlementQuery = (reads: readonly string[]) =>
  `SELECT ${reads.join(', ')} FROM transactions WHERE merchant_id = ? AND settled_date BETWEEN ? AND ? AND kind IN ('purchase', 'capture') ORDER BY settled_date, rowid`;

/** The query with every column a settlement file of any version is made of. */
export const SETTLEMENT_ROWS = settlementQuery([...new Set(Object.values(SETTLEMENT_CELLS).map((c) => c.reads))]);

/**
 * Each version's query (only the store columns its cells are made of: a million rows read are
 * millions of values made) and CSV line writer (over the query's rows, arrays in its SELECT's order),
 * made once: a column the spec adds without a cell here fails the sandbox as it loads, not a
 * merchant's export.
 */
const settlementFiles = Object.fromEntries(
  Object.entries(csvColumns.settlement).map(([version, columns]) => {
    const cells = columns.map((column: string) => {
      const cell = SETTLEMENT_CELLS[column];
      if (!cell) throw new Error(`The settlement file's column ${column} (version ${version}) has no cell`);
      return cell;
    });
    const reads = [...new Set(cells.map((c) => c.reads))];
    const line = csvLineWriter(
      cells.map(({ reads: column, cell }) => {
        const index = reads.indexOf(column);
        return (row: readonly unknown[]) => cell(row[index]);
      }),
    );
    return [version, { query: settlementQuery(reads), line }];
  }),
) as Record<keyof typeof csvColumns.settlement, { query: string; line: (row: readonly unknown[]) => string }>;

export function settlementHandlers(sb: Sandbox) {
  const { store } = sb;
  return {
    getSurcharge: async ({ body }, { account }) => {
      let type: string;
      if (body.cardID) {
        const row = await store.get(
          'SELECT card_type FROM cards WHERE merchant_id = ? AND card_id = ?',
          account.id,
          body.cardID,
        );
        if (!row) return refused(refusals.noSuchCard());
        type = row.card_type;
      } else {
        if (!luhn(body.paymentCardNumber!)) return refused(refusals.failsLuhn('paymentCardNumber'));
        type = cardType(body.paymentCardNumber!);
      }
      const rate = await store.get(
        'SELECT basis_points FROM surcharge_rates WHERE merchant_id = ? AND card_type = ?',
        account.id,
        type,
      );
      const cents = toCents(body.transactionAmount);
      const surcharge = halfUp(cents, Number(rate?.basis_points ?? 0));
      return {
        responseCode: '0',
        responseMessage: ok,
        transactionAmount: fromCents(cents),
        surchargeAmount: fromCents(surcharge),
        totalAmount: fromCents(cents + surcharge),
      };
    },
    getSettlement: async ({ body }, { account }) => {
      if (body.settlementTo < body.settlementFrom) return refused(refusals.settlementBackwards());
      const version = body.version ?? 'unversioned';
      // One query, streamed a batch of rows at a time into a streamed zip (settlement-export.ts): day
      // by day, and within a day in the order rows were written (rowid: SQLite's own, the PostgreSQL
      // store's BIGSERIAL), read in that order from the index on (merchant_id, settled_date), so no
      // sort is held in memory. Store.batches reads through a snapshot of its own (SQLite) or a
      // cursor (PostgreSQL). What has settled by today (x-settlement-file): a day still to come lists
      // nothing yet.
      const today = sb.clock.settlementToday();
      const file = settlementFiles[version];
      const rows = store.batches(
        file.query,
        account.id,
        body.settlementFrom,
        body.settlementTo < today ? body.settlementTo : today,
      );
      // Streamed to the client as it is made: memory holds a chunk, whatever the number of rows. The
      // entry is timed when it was made, on the caller's clock, as Sydney's wall clock reads it.
      const made = zipTime(sb.clock.timestamp(0, settlementDates.zone));
      return zipCsvStream('settlement.csv', csvColumns.settlement[version], rows, file.line, made);
    },
  } satisfies Partial<H>;
}

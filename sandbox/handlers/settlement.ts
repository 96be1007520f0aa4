// Surcharge quotes (per-merchant, per-scheme rates, rounded half up to the cent) and settlement
// files: a real zip holding one CSV, whose columns are the spec's x-csv-columns for the version asked.
import { csvColumns, settlementDates } from '../../generated/spec-constants.ts';
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { cardType, luhn } from '../cards.ts';
import { ok, type Sandbox } from '../context.ts';
import type { Store } from '../store.ts';
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

/** Rows read in one statement of the settlement file's paged read (settlementPages). */
export const PAGE_ROWS = 500;

/**
 * A merchant's settled card transactions in the settlement file's order (day by day, and within a
 * day in the order rows were written: rowid, SQLite's own or the PostgreSQL store's BIGSERIAL), a
 * page of at most `pageRows` at a time: `reads`, the columns, then the page's key (settled_date,
 * rowid) as each row's last two values. Three statements, each a seek on the index (merchant_id,
 * settled_date[, rowid]) that stops after a page: the first page, the rest of a day after a key, the
 * days after a day. (A row-value comparison `(settled_date, rowid) > (?, ?)` reads the same rows,
 * but SQLite seeks by its day alone: it read each day from its start again at every page.)
 */
const settlementQueries = (reads: readonly string[], pageRows: number) => {
  const select = `SELECT ${[...reads, 'settled_date', 'rowid'].join(', ')} FROM transactions WHERE merchant_id = ? AND`;
  const rest = `AND kind IN ('purchase', 'capture') ORDER BY settled_date, rowid LIMIT ${pageRows}`;
  return {
    pageRows,
    /** (merchant, from, to) */
    first: `${select} settled_date BETWEEN ? AND ? ${rest}`,
    /** (merchant, day, rowid): the day's rows after the key. */
    sameDay: `${select} settled_date = ? AND rowid > ? ${rest}`,
    /** (merchant, day, to): the days after the day, up to `to`. */
    laterDays: `${select} settled_date > ? AND settled_date <= ? ${rest}`,
  };
};
type SettlementQueries = ReturnType<typeof settlementQueries>;

/** The queries with every column a settlement file of any version is made of, in pages of `pageRows` (their plans are the store tests'). */
export const settlementQueriesOf = (pageRows: number) =>
  settlementQueries([...new Set(Object.values(SETTLEMENT_CELLS).map((c) => c.reads))], pageRows);
export const SETTLEMENT_QUERIES = settlementQueriesOf(PAGE_ROWS);
/** The first page's query with every column: (merchant, from, to). */
export const SETTLEMENT_ROWS = SETTLEMENT_QUERIES.first;

/**
 * Each version's queries (only the store columns its cells are made of: a million rows read are
 * millions of values made) and CSV line writer (over the queries' rows, arrays in their SELECT's
 * order), made once: a column the spec adds without a cell here fails the sandbox as it loads, not a
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
    return [version, { queries: settlementQueries(reads, PAGE_ROWS), line }];
  }),
) as Record<
  keyof typeof csvColumns.settlement,
  { queries: SettlementQueries; line: (row: readonly unknown[]) => string }
>;

/**
 * The file's rows, a page (at most `queries.pageRows`) at a time, each page its own short statement
 * continuing after the last key: a statement takes a pooled connection (PostgreSQL) or a read
 * snapshot (SQLite) only while it runs, so a client that reads slowly, or stops reading, holds
 * neither. The next page is asked for as soon as a page has come, before it is handed out: it is
 * read while this one is written. No snapshot spans pages: a day's rows are only ever added after
 * its last key, so every row committed before the read began is read, once (docs/DEPLOY.md,
 * "Settlement files").
 */
export async function* settlementPages(
  store: Pick<Store, 'arrays'>,
  queries: SettlementQueries,
  merchantId: string,
  from: string,
  to: string,
): AsyncGenerator<unknown[][]> {
  const { pageRows } = queries;
  type Step = { sql: string; params: unknown[]; day?: string };
  const read = (step: Step) => {
    const rows = store.arrays(step.sql, ...step.params);
    rows.catch(() => {}); // awaited below: a failure while its page waits for the reader is not unhandled
    return rows;
  };
  let step: Step = { sql: queries.first, params: [merchantId, from, to] };
  let page = read(step);
  for (;;) {
    const rows = await page;
    const last = rows.at(-1);
    let next: Step | undefined;
    if (last && rows.length === pageRows) {
      const day = String(last[last.length - 2]);
      next = { sql: queries.sameDay, params: [merchantId, day, last[last.length - 1]], day };
    } else if (step.day !== undefined) next = { sql: queries.laterDays, params: [merchantId, step.day, to] };
    if (next) page = read(next);
    if (rows.length) yield rows;
    if (!next) return;
    step = next;
  }
}

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
      // Read a page at a time (settlementPages), each page its own statement, into a streamed zip
      // (settlement-export.ts): day by day, and within a day in the order rows were written, read in
      // that order from the index on (merchant_id, settled_date), so no sort is held in memory and no
      // statement or connection is held while the client takes the file. What has settled by today
      // (x-settlement-file): a day still to come lists nothing yet.
      const today = sb.clock.settlementToday();
      const file = settlementFiles[version];
      const rows = settlementPages(
        store,
        file.queries,
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

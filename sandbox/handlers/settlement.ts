// Surcharge quotes (per-merchant, per-scheme rates, rounded half up to the cent) and settlement
// files: a real zip holding one CSV, whose columns are the spec's x-csv-columns for the version asked.
import { csvColumns } from '../../generated/spec-constants.ts';
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { cardType, luhn } from '../cards.ts';
import { ok, type Sandbox } from '../context.ts';
import { refused, sandboxRefusals as refusals } from '../refusals.ts';
import { fromCents, toCents } from '../money.ts';
import { zipCsvStream } from '../settlement-export.ts';

type H = GatewayHandlers<HandlerContext>;

/** A merchant's settled card transactions between two days, in the settlement file's order. */
export const SETTLEMENT_ROWS =
  // Only the columns the file is made of: a million rows read are a million objects made, and a
  // smaller one is less garbage for the collector while the export runs.
  "SELECT id, reference, status, amount, currency, card_type, masked_pan, settled_date, product FROM transactions WHERE merchant_id = ? AND settled_date BETWEEN ? AND ? AND kind IN ('purchase', 'capture') ORDER BY settled_date, rowid";

/** The sandbox's fee on settled card transactions, in basis points. */
const FEE_BP = 180;
const halfUp = (cents: number, bp: number) => Math.floor((cents * bp + 5000) / 10_000);

export function settlementHandlers(sb: Sandbox): Pick<H, 'getSurcharge' | 'getSettlement'> {
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
      // One query, streamed row by row into a streamed zip (settlement-export.ts): day by day, and
      // within a day in the order rows were written (rowid: SQLite's own, the PostgreSQL store's
      // BIGSERIAL), read in that order from the index on (merchant_id, settled_date), so no sort is
      // held in memory. Store.iterate reads through a snapshot of its own (SQLite) or a cursor (PostgreSQL).
      // What has settled by today (x-settlement-file): a day still to come lists nothing yet.
      const today = sb.clock.settlementToday();
      const rows = store.iterate<Record<string, any>>(
        SETTLEMENT_ROWS,
        account.id,
        body.settlementFrom,
        body.settlementTo < today ? body.settlementTo : today,
      );
      // Streamed to the client as it is made: memory holds a chunk, whatever the number of rows.
      return zipCsvStream('settlement.csv', columns, rows, values, (row) => row.settled_date);
    },
  };
}

// Batches: a zipped CSV of stored-card purchases (columns: the spec's x-csv-columns of batchFile),
// run at once; results as CSV (retrieveBatch), as JSON, and posted to batchNotifyURL.
import { parseCsv } from '../../runtime/settlement.ts';
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { invalid, ok, refusal, type Sandbox } from '../context.ts';
import { csvFile } from '../csv.ts';
import { holdsCardNumber } from '../guard.ts';
import { batchId } from '../ids.ts';
import { unzipCapped } from '../unzip.ts';
import type { Row } from '../store.ts';
import { charge } from './card-payments.ts';

type H = GatewayHandlers<HandlerContext>;

/**
 * The sandbox's limits on one batch (the contract bounds only batchFile's base64 length): what its
 * CSV may inflate to, and how many lines it may hold. A zip bomb stops at the first.
 */
export const MAX_BATCH_CSV_BYTES = 8 * 1024 * 1024;
export const MAX_BATCH_LINES = 20_000;

interface Line {
  transactionReferenceID: string;
  transactionID?: string;
  transactionAmount?: string;
  responseCode: string;
  responseMessage: string;
}

export function batchResult(row: Row) {
  return { responseCode: '0', responseMessage: ok, batchUUID: row.id, status: 'completed' as const, transactions: JSON.parse(row.lines) as Line[] };
}

export function batchHandlers(sb: Sandbox): Pick<H, 'processBatch' | 'retrieveBatch' | 'retrieveBatchResponse' | 'retrieveBatchNotify'> {
  const { store, clock, notifier, vault } = sb;
  const columns: string[] = sb.spec.components.schemas.ProcessBatchRequest.properties.batchFile['x-csv-columns']['1'];
  const resultColumns: string[] = sb.spec.components.schemas.BatchResultFile['x-csv-columns']['1'];
  const find = (merchantId: string, id: string) => store.get('SELECT * FROM batches WHERE merchant_id = ? AND id = ?', merchantId, id);
  return {
    processBatch: ({ body }, { account }) =>
      store.transaction(() => {
        const unzipped = unzipCapped(Buffer.from(body.batchFile, 'base64'), MAX_BATCH_CSV_BYTES);
        if ('error' in unzipped && unzipped.error === 'too large') return invalid('batchFile', `its CSV must not inflate to more than ${MAX_BATCH_CSV_BYTES} bytes`);
        const files = 'files' in unzipped ? Object.entries(unzipped.files).filter(([n]) => n.toLowerCase().endsWith('.csv')) : [];
        if (files.length !== 1) return invalid('batchFile', 'must be a base64 zip holding one CSV file');
        let text: string;
        try {
          text = new TextDecoder('utf-8', { fatal: true }).decode(files[0]![1]);
        } catch {
          return invalid('batchFile', 'its CSV must be UTF-8');
        }
        const [header = [], ...data] = parseCsv(text);
        if (columns.some((c, i) => header[i] !== c)) return invalid('batchFile', `its CSV columns must be ${columns.join(',')}`);
        if (data.length > MAX_BATCH_LINES) return invalid('batchFile', `its CSV must not hold more than ${MAX_BATCH_LINES} lines`);
        // A card number may reach the store from a batch line as from any field: refused the same way.
        const leak = data.findIndex((fields) => fields.some(holdsCardNumber));
        if (leak >= 0) return invalid('batchFile', `line ${leak + 1} must not hold a card number`);
        const lines: Line[] = data.filter((r) => r.length > 1).map((fields) => {
          const v = Object.fromEntries(columns.map((c, i) => [c, fields[i] ?? '']));
          const card = store.get('SELECT * FROM cards WHERE merchant_id = ? AND card_id = ?', account.id, v.cardID);
          if (!card || card.card_key !== v.cardKey) return { transactionReferenceID: v.transactionReferenceID!, responseCode: '-2', responseMessage: "Field 'cardKey' is invalid: does not match the stored card" };
          const result = charge(sb, account.id, {
            kind: 'purchase',
            card: { number: vault.decrypt(card.pan_encrypted), expiryMonth: card.expiry_month, expiryYear: card.expiry_year },
            cardField: 'cardID',
            body: { transactionAmount: v.transactionAmount, transactionCurrency: v.transactionCurrency, transactionProduct: v.transactionProduct, transactionReferenceID: v.transactionReferenceID },
          }) as Record<string, string>;
          return { transactionReferenceID: v.transactionReferenceID!, ...(result.transactionID ? { transactionID: result.transactionID, transactionAmount: result.transactionAmount } : {}), responseCode: result.responseCode!, responseMessage: result.responseMessage! };
        });
        const id = store.freshId('batches', 'id', batchId);
        store.run('INSERT INTO batches (id, merchant_id, notify_url, lines, created_at) VALUES (?, ?, ?, ?, ?)', id, account.id, body.batchNotifyURL ?? null, JSON.stringify(lines), clock.timestamp());
        if (body.batchNotifyURL) notifier.batchNotify(account, body.batchNotifyURL, batchResult(find(account.id, id)!));
        return { responseCode: '0', responseMessage: ok, batchUUID: id };
      }),
    retrieveBatch: ({ body }, { account }) => {
      const row = find(account.id, body.batchUUID);
      if (!row) return invalid('batchUUID', 'no such batch');
      const lines = JSON.parse(row.lines) as Record<string, string>[];
      return csvFile(resultColumns, lines);
    },
    retrieveBatchResponse: ({ params }, { account }) => {
      const row = find(account.id, params.batchUUID);
      return row ? batchResult(row) : invalid('batchUUID', 'no such batch');
    },
    retrieveBatchNotify: ({ params }, { account }) => {
      const row = find(account.id, params.batchUUID);
      return row ? batchResult(row) : refusal(-2, "Field 'batchUUID' is invalid: no such batch");
    },
  };
}

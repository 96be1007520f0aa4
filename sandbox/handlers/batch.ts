// Batches: a zipped CSV of stored-card purchases (columns: the spec's x-csv-columns of batchFile),
// run at once; results as CSV (retrieveBatch), as JSON, and posted to batchNotifyURL.
import { AsyncResource } from 'node:async_hooks';
import { csvColumns } from '../../generated/spec-constants.ts';
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { ok, type Sandbox } from '../context.ts';
import { refused, sandboxRefusals as refusals } from '../refusals.ts';
import { csvFile, findIndexInSlices, parseCsvInSlices } from '../csv.ts';
import { holdsCardNumber } from '../guard.ts';
import { onAccountTime } from '../clock-store.ts';
import { batchId } from '../ids.ts';
import { unzipCappedInSlices } from '../unzip.ts';
import type { Row, Store } from '../store.ts';
import { charge } from './card-payments.ts';
import { batchLineChecker, type CheckedLine } from '../batch-line.ts';

type LineChecker = (cells: string[]) => CheckedLine;

type H = GatewayHandlers<HandlerContext>;

/**
 * The sandbox's limits on one batch (the contract bounds only batchFile's base64 length): what its
 * CSV may inflate to, and how many lines it may hold. A zip bomb stops at the first.
 */
export const MAX_BATCH_CSV_BYTES = 8 * 1024 * 1024;
export const MAX_BATCH_LINES = 20_000;
/**
 * The longest batch line read: a line of valid fields is under 300 characters (a 64-character
 * reference, an amount, a currency, a 34-character product, a card's ID and key), quoted at worst
 * twice that. A longer line is refused with the file before it is parsed: a 7 MiB field held the
 * event loop 1.5 s while it was parsed, searched for card numbers and stored, only to be refused later.
 */
export const MAX_BATCH_LINE_CHARS = 4096;

/** The number of the first line longer than max characters, if any: 0 for the header, 1 for the first line after it. */
export function firstLineLongerThan(text: string, max: number): number | undefined {
  let line = 0;
  for (let start = 0; start < text.length; line++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (end - start > max) return line;
    start = end + 1;
  }
  return undefined;
}

interface Line {
  /** The line of the batch file (its header is line 1): every line is in the results, a bad one refused. */
  line: number;
  /** Absent when the line's own is not a valid reference. */
  transactionReferenceID?: string;
  transactionID?: string;
  transactionAmount?: string;
  responseCode: string;
  responseMessage: string;
}

/** A batch's results: the lines run so far, completed or still pending (the contract's status). */
export async function batchResult(store: Store, row: Row) {
  const lines = (JSON.parse(row.lines) as Line[]).concat(
    (await store.all('SELECT line FROM batch_lines WHERE batch_id = ? ORDER BY seq', row.id)).map(
      (l) => JSON.parse(l.line) as Line,
    ),
  );
  return {
    responseCode: '0',
    responseMessage: ok,
    batchUUID: row.id,
    status: row.status as 'pending' | 'completed',
    transactions: lines,
  };
}

/** The lines of pending batches, parsed once (1.5 MB of JSON for 20,000 lines), by batch id. */
const parsedInputs = new Map<string, string[][]>();

/** How long one slice of a batch may hold the event loop: every other request waits meanwhile. */
export const BATCH_SLICE_MS = 10;
/**
 * Lines a slice runs whatever the clock says (about 10 ms of work): a batch this small is completed
 * when processBatch answers, however busy the machine is.
 */
export const BATCH_SLICE_MIN_LINES = 32;

/**
 * Runs a batch's lines from where it stopped for at most BATCH_SLICE_MS, in the caller's transaction;
 * completes it (and queues its notification) when none is left. Answers whether lines remain. The
 * batch's row is locked until the commit: one instance at a time runs a batch, from where it stopped.
 */
export async function runBatchSlice(sb: Sandbox, id: string, check: LineChecker): Promise<boolean> {
  const owner = await sb.store.get('SELECT merchant_id FROM batches WHERE id = ?', id);
  if (!owner) return false;
  // Its lines are charged on its merchant's time, wherever the slice runs.
  return onAccountTime(sb.store, sb.clock, { kind: 'merchant', id: owner.merchant_id }, () => runSlice(sb, id, check));
}

async function runSlice(sb: Sandbox, id: string, check: LineChecker): Promise<boolean> {
  const { store, vault, notifier } = sb;
  // Not the pending lines themselves (1.5 MB for 20,000): they are read and parsed once, below.
  const batch = await store.get(
    'SELECT id, merchant_id, status, next_line, notify_url FROM batches WHERE id = ? FOR UPDATE',
    id,
  );
  if (batch?.status !== 'pending') return false;
  let input = parsedInputs.get(id);
  if (!input) {
    input = JSON.parse((await store.get('SELECT pending FROM batches WHERE id = ?', id))!.pending) as string[][];
    parsedInputs.set(id, input);
  }
  const until = performance.now() + BATCH_SLICE_MS;
  // Each stored card of the slice read and decrypted once, however many lines use it.
  const cards = new Map<string, (Row & { number: string }) | undefined>();
  let next = Number(batch.next_line);
  const least = next + BATCH_SLICE_MIN_LINES;
  for (; next < input.length && (next < least || performance.now() < until); next++) {
    const checked = check(input[next]!);
    const v = checked.fields;
    const at = {
      line: next + 2,
      ...(checked.reference === undefined ? {} : { transactionReferenceID: checked.reference }),
    };
    let line: Line;
    if (checked.refusal) line = { ...at, ...refused(checked.refusal) };
    else {
      if (!cards.has(v.cardID!)) {
        const row = await store.get(
          'SELECT * FROM cards WHERE merchant_id = ? AND card_id = ?',
          batch.merchant_id,
          v.cardID,
        );
        cards.set(v.cardID!, row && { ...row, number: vault.decrypt(row.pan_encrypted) });
      }
      const card = cards.get(v.cardID!);
      // A card the vault does not hold is not there, as /token says, not a key that does not match.
      if (!card) line = { ...at, ...refused(refusals.noSuchCard('cardID')) };
      else if (card.card_key !== v.cardKey) line = { ...at, ...refused(refusals.cardKeyMismatch()) };
      else {
        const result = (await charge(sb, batch.merchant_id, {
          kind: 'purchase',
          card: { number: card.number, expiryMonth: card.expiry_month, expiryYear: card.expiry_year },
          cardField: 'cardID',
          body: {
            transactionAmount: v.transactionAmount,
            transactionCurrency: v.transactionCurrency,
            transactionProduct: v.transactionProduct,
            transactionReferenceID: v.transactionReferenceID,
          },
        })) as Record<string, string>;
        line = {
          ...at,
          ...(result.transactionID
            ? { transactionID: result.transactionID, transactionAmount: result.transactionAmount }
            : {}),
          responseCode: result.responseCode!,
          responseMessage: result.responseMessage!,
        };
      }
    }
    await store.run('INSERT INTO batch_lines (batch_id, seq, line) VALUES (?, ?, ?)', id, next, JSON.stringify(line));
  }
  const done = next >= input.length;
  // The lines to run are written once; a slice moves next_line on, and the last one clears them.
  if (done) {
    await store.run("UPDATE batches SET next_line = ?, status = 'completed', pending = '[]' WHERE id = ?", next, id);
    parsedInputs.delete(id);
  } else await store.run('UPDATE batches SET next_line = ? WHERE id = ?', next, id);
  if (done && batch.notify_url) {
    const merchant = { kind: 'merchant' as const, id: batch.merchant_id as string, apiKey: '', passphrase: '' };
    await notifier.batchNotify(
      merchant,
      batch.notify_url,
      await batchResult(store, (await store.get('SELECT * FROM batches WHERE id = ?', id))!),
    );
  }
  return !done;
}

/**
 * Runs pending batches in the background, one slice at a time, yielding to the event loop between
 * slices (setImmediate), each slice in its own transaction. Instances sharing a store each take a
 * pending batch nobody holds (FOR UPDATE SKIP LOCKED); a restarted sandbox, or another instance when
 * one stopped, picks up where it was (`poll` looks again every few seconds).
 */
export class BatchRunner {
  private scheduled = false;
  private stopped = false;
  /** The step under way, if any. */
  private current: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly sb: Sandbox;
  private readonly check: LineChecker;
  /**
   * Schedules the next step outside whatever asynchronous context kicks it: a kick from inside a
   * request's transaction must not carry that transaction (the store finds it by AsyncLocalStorage)
   * into a step that runs after its commit.
   */
  private readonly schedule: () => void;

  constructor(sb: Sandbox) {
    this.sb = sb;
    this.check = batchLineChecker(sb.spec, csvColumns.batchFile['1']);
    this.schedule = AsyncResource.bind(
      () =>
        void setImmediate(() => {
          this.current = this.step();
        }),
    );
  }

  kick(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    this.schedule();
  }

  /** Looks for pending batches every intervalMs (one left by an instance that stopped). */
  poll(intervalMs = 2000): void {
    this.timer = setInterval(() => this.kick(), intervalMs);
    this.timer.unref();
  }

  private async step(): Promise<void> {
    this.scheduled = false;
    if (this.stopped) return;
    const { store } = this.sb;
    let more: boolean;
    try {
      more = await store.transaction(async () => {
        const pending = await store.get(
          "SELECT id FROM batches WHERE status = 'pending' ORDER BY created_at, rowid LIMIT 1 FOR UPDATE SKIP LOCKED",
        );
        if (!pending) return false;
        await runBatchSlice(this.sb, pending.id, this.check);
        return true;
      });
    } catch {
      return; // the store closed under it, or a failure the next poll tries again
    }
    if (more) this.kick();
  }

  /** Stops scheduling and waits for a slice under way (its transaction commits before the store closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.current;
  }
}

export function batchHandlers(sb: Sandbox, runner: BatchRunner) {
  const { store, clock } = sb;
  const columns: readonly string[] = csvColumns.batchFile['1'];
  const resultColumns: readonly string[] = csvColumns.batchResult['1'];
  const check = batchLineChecker(sb.spec, columns);
  const find = (merchantId: string, id: string) =>
    store.get('SELECT * FROM batches WHERE merchant_id = ? AND id = ?', merchantId, id);
  return {
    // The file is inflated and parsed in slices, yielding between them, and nothing is written until
    // it has passed every check; then the batch is stored and its first slice run in one transaction.
    processBatch: async ({ body }, { account }) => {
      const unzipped = await unzipCappedInSlices(
        Buffer.from(body.batchFile, 'base64'),
        MAX_BATCH_CSV_BYTES,
        BATCH_SLICE_MS,
      );
      if ('error' in unzipped && unzipped.error === 'too large')
        return refused(refusals.batchTooLarge(MAX_BATCH_CSV_BYTES));
      const files =
        'files' in unzipped ? Object.entries(unzipped.files).filter(([n]) => n.toLowerCase().endsWith('.csv')) : [];
      if (files.length !== 1) return refused(refusals.batchNotOneCsv());
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(files[0]![1]);
      } catch {
        return refused(refusals.batchNotUtf8());
      }
      const long = firstLineLongerThan(text, MAX_BATCH_LINE_CHARS);
      if (long !== undefined)
        return refused(
          long === 0 ? refusals.batchColumns(columns) : refusals.batchLineTooLong(long, MAX_BATCH_LINE_CHARS),
        );
      const [header = [], ...data] = await parseCsvInSlices(text, BATCH_SLICE_MS);
      if (columns.some((c, i) => header[i] !== c)) return refused(refusals.batchColumns(columns));
      if (data.length > MAX_BATCH_LINES) return refused(refusals.batchTooManyLines(MAX_BATCH_LINES));
      // A card number may reach the store from a batch line as from any field: refused the same way.
      const leak = await findIndexInSlices(data, (fields) => fields.some(holdsCardNumber), BATCH_SLICE_MS);
      if (leak >= 0) return refused(refusals.batchLineHoldsCard(leak + 1));
      // Every line is run and answered, a malformed one refused; a blank line holds nothing.
      const rows = data.filter((r) => !(r.length === 1 && r[0]!.trim() === ''));
      const lines = JSON.stringify(rows);
      const stored = await store.transaction(async () => {
        const id = await store.freshId('batches', 'id', batchId);
        await store.run(
          "INSERT INTO batches (id, merchant_id, notify_url, lines, created_at, status, pending, next_line) VALUES (?, ?, ?, '[]', ?, 'pending', ?, 0)",
          id,
          account.id,
          body.batchNotifyURL ?? null,
          clock.timestamp(),
          lines,
        );
        parsedInputs.set(id, rows); // the runner starts from the rows parsed here, not from their JSON
        // A small batch runs with the request, and is completed when its answer leaves; a larger one
        // only in the background, so that the request's own work (parse, checks, store) is all it holds.
        const more = data.length > BATCH_SLICE_MIN_LINES || (await runBatchSlice(sb, id, check));
        return { id, more };
      });
      // Kicked once committed: a runner on a database server sees the batch only then.
      if (stored.more) runner.kick();
      return { responseCode: '0', responseMessage: ok, batchUUID: stored.id };
    },
    retrieveBatch: async ({ body }, { account }) => {
      const row = await find(account.id, body.batchUUID);
      if (!row) return refused(refusals.noSuchBatch('batchUUID'));
      return csvFile(
        resultColumns,
        (await batchResult(store, row)).transactions as unknown as Record<string, string>[],
      );
    },
    retrieveBatchResponse: async ({ params }, { account }) => {
      const row = await find(account.id, params.batchUUID);
      return row ? batchResult(store, row) : refused(refusals.noSuchBatch('batchUUID'));
    },
    retrieveBatchNotify: async ({ params }, { account }) => {
      const row = await find(account.id, params.batchUUID);
      return row ? batchResult(store, row) : refused(refusals.noSuchBatch('batchUUID'));
    },
  } satisfies Partial<H>;
}

// Turning what a handler returned into the response, held to the contract: the result hashes are
// added from their recipes, the body is validated against the operation's own result or refusal
// schema, and no unmasked card number may leave in it (runtime/card-numbers.ts finds them).
import { createRequire } from 'node:module';
import type * as Fflate from 'fflate';
import { type CardReading, cardNumberIn, findCardNumber } from '../../runtime/card-numbers.ts';
import { CannotCarry, type Protocol } from '../../runtime/protocols/protocol.ts';
import { computeHash } from '../../runtime/recipe-hashes.ts';
import { hashRecipes, protocols, resultValidators } from './contract.ts';
import { nodeDigests } from './digests.ts';
import { fieldName, forms, ruleInWords } from './refusals.ts';
import type { Account, ContractOperation, GatewayResponse } from './types.ts';

/** The media type of a structured answer in the spec (the spec's own protocol's): any other result is a file. */
const STRUCTURED = protocols.canonical.answerType;
/** Whether the operation's result is a file (a zip, a CSV), the same bytes in every protocol. */
export const answersFile = (op: ContractOperation): boolean => op.resultType !== STRUCTURED;

/**
 * A file's own delimiters end a card number as a letter does: a settlement CSV is read cell by cell
 * (its commas and line ends would otherwise join the digits of neighbouring cells, a date and an
 * amount and a receipt number, into runs a card number's length). What a cell holds came through
 * the sandbox's guard, which reads each field whole, commas included.
 */
const FILE: CardReading = { breaks: ',\r\n"' };

/**
 * fflate, loaded when the first file answer is scanned: most servers never answer a zip, and its
 * module builds its tables as it loads (some 10 ms of CPU at every start).
 */
let zip: typeof Fflate | undefined;
const fflate = (): typeof Fflate => (zip ??= createRequire(import.meta.url)('fflate') as typeof Fflate);

/** Whether any entry of a zip holds a card number; bytes that are not a zip are scanned as they are. */
function zipHoldsCardNumber(bytes: Uint8Array): boolean {
  const decoder = new TextDecoder();
  let entries: Record<string, Uint8Array>;
  try {
    entries = fflate().unzipSync(bytes);
  } catch {
    return findCardNumber(decoder.decode(bytes), FILE);
  }
  return Object.values(entries).some((entry) => findCardNumber(decoder.decode(entry), FILE));
}

/** Files up to this size are scanned in one go (a 32 KiB zip can hold about 1 MiB of CSV); larger ones in slices, yielding between them. */
const SCAN_AT_ONCE = 32 * 1024;
const SCAN_SLICE_MS = 10;
/** Compressed bytes inflated at a time: 16 KiB of a settlement zip is about 400 KiB of CSV to scan. */
const SCAN_PUSH = 16_384;
/** The most of a chunk's last cell carried into the next: longer than any free-text field of a file. */
const CARRY = 1024;

/**
 * A zip's entries inflated as the zip's bytes come in, each scanned for a card number a chunk at a
 * time. A card number cut by a chunk boundary is still found, and a cell cut by one is not misread:
 * a chunk's whole cells are scanned, and the cell it ends in is carried into the next. Bytes that
 * turn out not to be a zip are scanned as they are, with the same carried tail.
 */
class ZipScanner {
  found = false;
  private broken = false;
  private rawTail = '';
  /** The entry's cell its last chunk ended in, not yet scanned. */
  private cellTail = '';
  private readonly unzip = new (fflate().Unzip)((entry) => {
    const decoder = new TextDecoder();
    this.cellTail = '';
    entry.ondata = (error, chunk, final) => {
      if (error) {
        this.broken = true;
        return;
      }
      this.cellTail = this.scan(this.cellTail + decoder.decode(chunk, { stream: !final }), final);
    };
    entry.start();
  });

  constructor() {
    this.unzip.register(fflate().UnzipInflate);
  }

  push(bytes: Uint8Array, final: boolean): void {
    if (!this.broken) {
      try {
        this.unzip.push(bytes, final);
      } catch {
        this.broken = true;
      }
    }
    if (this.broken) this.rawTail = this.scan(this.rawTail + new TextDecoder('latin1').decode(bytes), final);
    // A zip that ends inside an entry: the cell its text ended in is scanned too.
    if (final && this.cellTail) this.cellTail = this.scan(this.cellTail, true);
  }

  /**
   * Scans the text's whole cells and returns the cell it ends in (what follows its last delimiter), to
   * be scanned with what comes next: a cell cut by a chunk's end is not what the file says, and a
   * transaction ID cut inside its UUID reads as digits a card could be (1336-b1d1b04f-4725-6512-0345-5:
   * 4725651203455 passes Luhn). At an entry's end (`final`) all of it is scanned. A cell with no
   * delimiter in its last CARRY characters is scanned as far as it came, and those carried.
   */
  private scan(text: string, final: boolean): string {
    const from = Math.max(0, text.length - CARRY);
    const last = text.slice(from);
    const at = Math.max(last.lastIndexOf(','), last.lastIndexOf('\n'), last.lastIndexOf('\r'), last.lastIndexOf('"'));
    // No delimiter in the last CARRY characters: the cell is all the text (kept whole for the next
    // chunk), or longer than CARRY (scanned as far as it came, its end carried).
    const long = at < 0 && from > 0;
    const cut = final || long ? text.length : from + at + 1;
    if (cut > 0 && findCardNumber(text.slice(0, cut), FILE)) this.found = true;
    return final ? '' : long ? last : text.slice(cut);
  }
}

/**
 * Whether a file answer holds a card number: text as it is, a zip entry by entry. A large zip is
 * inflated as a stream and scanned a chunk at a time, yielding to the event loop every 10 ms, so
 * that a 100,000-row settlement file does not stall every other request while it is checked.
 */
export function fileHoldsCardNumber(file: string | Uint8Array): boolean | Promise<boolean> {
  if (typeof file === 'string') return findCardNumber(file, FILE);
  if (file.length <= SCAN_AT_ONCE) return zipHoldsCardNumber(file);
  return scanZipInSlices(file);
}

async function scanZipInSlices(zip: Uint8Array): Promise<boolean> {
  const scanner = new ZipScanner();
  let sliceEnd = performance.now() + SCAN_SLICE_MS;
  for (let i = 0; i < zip.length && !scanner.found; i += SCAN_PUSH) {
    scanner.push(zip.subarray(i, i + SCAN_PUSH), i + SCAN_PUSH >= zip.length);
    if (performance.now() > sliceEnd) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceEnd = performance.now() + SCAN_SLICE_MS;
    }
  }
  return scanner.found;
}

/** A file answer streamed a chunk at a time (an export too large to hold whole), rather than bytes. */
export type ByteStream = AsyncIterable<Uint8Array>;
export const isByteStream = (value: unknown): value is ByteStream =>
  typeof value === 'object' && value !== null && !(value instanceof Uint8Array) && Symbol.asyncIterator in value;

/** A response body whole: a streamed one read to its end (for callers of `handle` that want the bytes). */
export async function bodyBytes(body: string | Uint8Array | ByteStream): Promise<Uint8Array> {
  if (typeof body === 'string') return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return body;
  const parts: Uint8Array[] = [];
  for await (const chunk of body) parts.push(chunk);
  return Buffer.concat(parts);
}

/** What ends a streamed answer that turns out to hold a card number. */
export class CardNumberLeak extends Error {
  constructor() {
    super('A card number appears unmasked in the answer');
  }
}

/**
 * A streamed zip's chunks, each scanned before it is passed on. One chunk is held back until the
 * next has been scanned (the last until the zip is complete), so no byte is sent before the bytes
 * that finish the text it may be part of have been read: a card number ends the stream with
 * CardNumberLeak before any of it is sent.
 */
async function* scannedZip(chunks: ByteStream): AsyncGenerator<Uint8Array> {
  const scanner = new ZipScanner();
  let held: Uint8Array | undefined;
  for await (const chunk of chunks) {
    scanner.push(chunk, false);
    if (scanner.found) throw new CardNumberLeak();
    if (held) yield held;
    held = chunk;
  }
  scanner.push(new Uint8Array(0), true);
  if (scanner.found) throw new CardNumberLeak();
  if (held) yield held;
}

/** A violation that is `sensitive` is never sent on, whatever the response validation mode. */
export type Answered = { response: GatewayResponse; refusal?: boolean } | { violation: string; sensitive?: boolean };

const NO_NAMES: ReadonlySet<string> = new Set();

// A violation is sent on as it stands in the log mode: never one that holds a card number, whatever
// else it breaks (a paymentCardNumber sent unmasked breaks its schema's pattern first), in any field:
// the hashes too, which are the handler's own here (one that does not match, or a refusal's). A
// function of its own, not a closure made on every answer.
const violationIn = (returned: unknown, text: string): Answered =>
  cardNumberIn(returned, NO_NAMES)
    ? { violation: `${text}; and a card number appears unmasked in the answer`, sensitive: true }
    : { violation: text };

const isRefusal = (value: Record<string, unknown>) => Number(value.responseCode) < 0;

/**
 * What answering an operation needs of it beyond the table, made once per operation: for each result
 * hash, the first layer of its input (the hash's own field, undefined, so that a value the handler put
 * there is not hashed into itself; a fresh object with a computed key on every answer costs V8 a
 * dictionary-mode object each time), and the names of the hashes, which the card-number reading skips.
 */
interface AnswerPlan {
  readonly masks: readonly Readonly<Record<string, undefined>>[];
  readonly hashNames: ReadonlySet<string>;
}
const plans = new WeakMap<ContractOperation, AnswerPlan>();
function planOf(op: ContractOperation): AnswerPlan {
  let plan = plans.get(op);
  if (!plan) {
    plan = {
      masks: op.resultHashes.map((use) => Object.freeze({ [use.name]: undefined })),
      hashNames: new Set(op.resultHashes.map((h) => h.name)),
    };
    plans.set(op, plan);
  }
  return plan;
}

/**
 * deferFileScan: leave the card-number scan of a file answer to the caller, who runs
 * fileHoldsCardNumber() and may wait for it (a large settlement zip is scanned in slices).
 */
export function answer(
  op: ContractOperation,
  account: Account,
  request: Record<string, unknown>,
  returned: unknown,
  deferFileScan = false,
  protocol: Protocol = protocols.canonical,
): Answered {
  if (op.resultType === 'application/zip' && isByteStream(returned)) {
    return { response: { status: op.status, headers: { 'content-type': op.resultType }, body: scannedZip(returned) } };
  }
  if (answersFile(op) && (returned instanceof Uint8Array || typeof returned === 'string')) {
    const ok = op.resultType === 'application/zip' ? returned instanceof Uint8Array : typeof returned === 'string';
    if (!ok)
      return {
        violation: `${op.operationId} must answer ${op.resultType === 'application/zip' ? 'bytes' : 'text'} for ${op.resultType}`,
      };
    // Files are scanned like JSON: a zip entry by entry (a settlement CSV), text as it is.
    const leaks =
      !deferFileScan &&
      (typeof returned === 'string' ? findCardNumber(returned, FILE) : zipHoldsCardNumber(returned as Uint8Array));
    if (leaks) return { violation: 'A card number appears unmasked in the answer', sensitive: true };
    return { response: { status: op.status, headers: { 'content-type': op.resultType }, body: returned } };
  }
  if (!returned || typeof returned !== 'object' || Array.isArray(returned))
    return violationIn(
      returned,
      `${op.operationId} answered ${returned === null ? 'null' : Array.isArray(returned) ? 'a list' : typeof returned}, not an object`,
    );

  // The handler's object is copied only when a result hash is added to it: it stays the handler's.
  let body = returned as Record<string, unknown>;
  const refusal = isRefusal(body);
  const plan = planOf(op);
  if (!refusal) {
    for (let i = 0; i < op.resultHashes.length; i++) {
      const use = op.resultHashes[i]!;
      const expected = computeHash(
        hashRecipes[use.recipe],
        account.passphrase,
        [plan.masks[i]!, body, request],
        nodeDigests,
      );
      if (body[use.name] === undefined) {
        if (body === returned) body = { ...body };
        body[use.name] = expected;
      } else if (body[use.name] !== expected)
        return violationIn(returned, forms.field(use.name, `is not what recipe ${use.recipe} gives`));
    }
  }
  const schema = refusal ? op.refusal : op.result;
  const validate = resultValidators[schema]!;
  if (!validate(body)) {
    const e = validate.errors![0]!;
    const child = (e.params.missingProperty ?? e.params.additionalProperty) as string | undefined;
    const name = fieldName(e.instancePath, child);
    const what =
      e.keyword === 'required'
        ? 'is required'
        : e.keyword === 'additionalProperties'
          ? 'is not in the contract'
          : `is invalid: ${ruleInWords(e)}`;
    return violationIn(returned, `${name ? forms.field(name, what) : forms.body(what)} (${schema})`);
  }
  // Held to its schema above whatever the protocol; only the writing differs.
  let text: string;
  try {
    text = protocol.writeAnswer(body, refusal ? op.shapes.refusal : op.shapes.result);
  } catch (error) {
    if (error instanceof CannotCarry) return violationIn(returned, `${error.message} (${schema})`);
    throw error;
  }
  // Each value read on its own (the hashes this answer computed are hashes: they hold nothing sent),
  // unless a look at the text the protocol wrote rules every value out at once.
  if (!protocol.cannotHoldCardNumber?.(text) && cardNumberIn(body, plan.hashNames))
    return { violation: 'A card number appears unmasked in the answer', sensitive: true };
  return { response: { status: op.status, headers: { 'content-type': protocol.answerType }, body: text }, refusal };
}

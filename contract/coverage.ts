// What a run reached: per operation, which of its documented answers (the responseCodes its result
// and refusal examples show, and the refusals every operation documents: -1 for a credential, -2 for
// an invalid field, -3 for a missing one) came back, and which cards the run paid with and had processed.
import { isApproved } from '../generated/client.ts';
import { operations, type ContractOperation } from '../generated/operations.ts';
import { exampleValue } from '../runtime/document.ts';
import { chooseForm } from '../runtime/forms.ts';
import { doc } from './requests.ts';
import { protocols } from '../generated/protocols.ts';

const CARD_FIELDS = ['paymentCardNumber', 'cardNumber'];

/** The answers an operation documents, as responseCodes. */
export function documentedCodes(op: ContractOperation): number[] {
  const codes = new Set<number>();
  for (const name of [...op.examples.result, ...op.examples.refusal]) {
    const value = exampleValue(doc, name) as { responseCode?: unknown } | undefined;
    if (value && typeof value === 'object' && value.responseCode !== undefined) codes.add(Number(value.responseCode));
  }
  if (op.resultType === protocols.canonical.answerType || op.examples.result.length === 0) codes.add(0);
  if (op.credentials.length || op.headers) codes.add(-1);
  if (op.request) codes.add(-2).add(-3);
  return [...codes].sort((a, b) => a - b);
}

/**
 * Whether an answer of this responseCode is the operation's success. The seed: "`0` means success"
 * (§2, §7.1; the client's isApproved, runtime/client.ts): 0 is every operation's success. A decline
 * (above 0) is a result the operation documents, not its success: a purchase declined was not made.
 * A query (retry: safe, it changes nothing) succeeds with any result, as what it reads stands
 * (queryDD's debit pending 10, approved 0, dishonoured 7). An operation whose documented results show
 * one code and not 0 succeeds with that code too (processDDebit's 10, pending until it settles); of
 * several such codes none is taken (which one the examples list first says nothing). A file (a zip,
 * a CSV) counts as 0.
 */
export function isSuccess(op: ContractOperation, code: number): boolean {
  if (op.retry && 'safe' in op.retry) return code >= 0;
  return isApproved({ responseCode: code }) || code === pendingCode(op);
}

/** The responseCode of a success answer, in words: what a success check asks for. */
export function successWords(op: ContractOperation): string {
  if (op.retry && 'safe' in op.retry) return 'responseCode 0 or above';
  const pending = pendingCode(op);
  return `responseCode 0${pending === undefined ? '' : ` or ${pending}`}`;
}

const pendingCodes = new WeakMap<ContractOperation, number | undefined>();

/** The one code of the operation's documented results where that code is not 0 (processDDebit's 10). */
function pendingCode(op: ContractOperation): number | undefined {
  if (pendingCodes.has(op)) return pendingCodes.get(op);
  const codes = new Set(
    op.examples.result
      .map((name) => (exampleValue(doc, name) as { responseCode?: unknown } | undefined)?.responseCode)
      .filter((c) => c !== undefined)
      .map(Number),
  );
  const [only] = codes;
  const code = codes.size === 1 && only !== 0 ? only : undefined;
  pendingCodes.set(op, code);
  return code;
}

export interface OperationCoverage {
  operationId: string;
  documented: number[];
  reached: number[];
  missed: number[];
}

export class Coverage {
  private readonly reached = new Map<string, Set<number>>();
  private readonly cards = new Set<string>();
  /** `operationId form` of each request form whose success the run reached (operations of several forms). */
  private readonly formsSucceeded = new Set<string>();

  /** One answer the run received. A binary or CSV answer counts as the success it is. */
  record(op: ContractOperation, request: Record<string, unknown> | undefined, status: number, json: unknown): void {
    const code =
      json && typeof json === 'object' && 'responseCode' in json
        ? Number((json as { responseCode: unknown }).responseCode)
        : status === op.status
          ? 0
          : undefined;
    if (code === undefined || Number.isNaN(code)) return;
    let seen = this.reached.get(op.operationId);
    if (!seen) {
      seen = new Set();
      this.reached.set(op.operationId, seen);
    }
    seen.add(code);
    if (isSuccess(op, code) && request && (op.requestForms?.length ?? 0) > 1)
      this.formsSucceeded.add(`${op.operationId} ${chooseForm(op.requestForms!, request).schema}`);
    // Cards the sandbox processed (approved or declined for a reason of its own, not "not recognised").
    if (code < 0 || code === 1) return;
    for (const field of CARD_FIELDS) {
      const pan = request?.[field];
      if (typeof pan === 'string' && /^[0-9]{12,19}$/.test(pan)) this.cards.add(`${pan.slice(0, 6)}…${pan.slice(-4)}`);
    }
  }

  table(selected: readonly string[]): OperationCoverage[] {
    return operations
      .filter((op) => selected.includes(op.operationId))
      .map((op) => {
        const documented = documentedCodes(op);
        const seen = this.reached.get(op.operationId) ?? new Set<number>();
        return {
          operationId: op.operationId,
          documented,
          reached: [...seen].sort((a, b) => a - b),
          missed: documented.filter((c) => !seen.has(c)),
        };
      });
  }

  /** The share of documented answers reached, over the operations the run selected, in per cent. */
  percent(selected: readonly string[]): number {
    const rows = this.table(selected);
    const documented = rows.reduce((n, r) => n + r.documented.length, 0);
    const missed = rows.reduce((n, r) => n + r.missed.length, 0);
    return documented ? Math.round(((documented - missed) / documented) * 1000) / 10 : 100;
  }

  /** Whether the run reached the operation's success (isSuccess): not a refusal, and not a decline. */
  successReached(op: ContractOperation, form?: string): boolean {
    if (form && (op.requestForms?.length ?? 0) > 1) return this.formsSucceeded.has(`${op.operationId} ${form}`);
    return [...(this.reached.get(op.operationId) ?? [])].some((code) => isSuccess(op, code));
  }

  cardsUsed(): string[] {
    return [...this.cards].sort();
  }
}

/** The coverage table for the console: one line per operation with what it missed. */
export function coverageSummary(coverage: Coverage, selected: readonly string[]): string {
  const rows = coverage.table(selected);
  const lines = ['coverage of documented answers (responseCode reached / documented):'];
  for (const r of rows) {
    lines.push(
      `  ${r.operationId.padEnd(34)} ${String(r.documented.length - r.missed.length).padStart(2)}/${r.documented.length}${r.missed.length ? `  missed ${r.missed.join(', ')}` : ''}`,
    );
  }
  lines.push(
    `  overall ${coverage.percent(selected)} %; cards paid with: ${coverage.cardsUsed().join(', ') || 'none'}`,
  );
  return lines.join('\n');
}

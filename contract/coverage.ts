// What a run reached: per operation, which of its documented answers (the responseCodes its result
// and refusal examples show, and the refusals every operation documents: -1 for a credential, -2 for
// an invalid field, -3 for a missing one) came back, and which cards the run paid with and had processed.
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
    if (code >= 0 && request && (op.requestForms?.length ?? 0) > 1)
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

  /** Whether the run reached the operation's success: an answer of its result, not a refusal. */
  successReached(op: ContractOperation, form?: string): boolean {
    if (form && (op.requestForms?.length ?? 0) > 1) return this.formsSucceeded.has(`${op.operationId} ${form}`);
    return [...(this.reached.get(op.operationId) ?? [])].some((code) => code >= 0);
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

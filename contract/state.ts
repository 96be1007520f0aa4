// The suite builds the state an operation's success needs, for every operation, with no scenario
// written by hand: every approved answer (and the request it answered) leaves its identifiers in a
// pool, by field name (transactionID, cardID and cardKey, fingerprint, batchUUID, payId,
// agreementIdentification, requestReference, payoutId...). After the other checks, each operation
// whose success answer the run has not reached is sent again from its example, its identifier
// fields and path parameters taken from the pool, newest first, until one is answered with success.
import type { ContractOperation } from '../generated/operations.ts';
import type { Check } from './checks.ts';
import { judge } from './checks.ts';
import { formOf, send, signBody } from './http.ts';
import { doc, requestExamples } from './requests.ts';

/** Names of the fields that identify something the gateway made (what one operation answers and another takes). */
const IDENTIFIER = /(ID|Id|UUID|Key|Reference|Identification|fingerprint|payId|Token)$/;
/** Fields never taken from the pool: the caller's own account and credentials. */
const OWN = new Set(['merchantUUID', 'partnerUUID', 'apiKey', 'accessToken', 'transactionReferenceID']);
/** Sets of values tried per operation, from the best records and then name by name. */
const TRIES = 12;

interface Found {
  /** The path of the operation that answered it: a record from a nearby path is tried first. */
  path: string;
  values: Map<string, string>;
}

export class StatePool {
  private readonly records: Found[] = [];

  /** Keeps the identifiers of an approved answer and of the request it answered, as one record. */
  add(request: unknown, answer: unknown, path = ''): void {
    const code = Number((answer as { responseCode?: unknown } | null)?.responseCode);
    if (!(code >= 0)) return;
    const values = new Map<string, string>();
    walk(request, '', values);
    walk(answer, '', values);
    if (values.size) this.records.unshift({ path, values });
    this.records.length = Math.min(this.records.length, 5000);
  }

  /**
   * Values for the names asked, one set per try: records holding the most of the names, from the
   * nearest path, newest first; then, name by name, the newest values of each.
   */
  choices(names: string[], path: string, tries: number): Map<string, string>[] {
    const near = (p: string) => {
      let n = 0;
      while (n < p.length && p[n] === path[n]) n++;
      return n;
    };
    const held = (r: Found) => names.filter((n) => valueFor(r.values, n) !== undefined).length;
    const ranked = this.records
      .map((r, age) => ({ r, age }))
      .filter(({ r }) => held(r) > 0)
      .sort((a, b) => held(b.r) - held(a.r) || near(b.r.path) - near(a.r.path) || a.age - b.age)
      .map(({ r }) => new Map(names.flatMap((n) => (valueFor(r.values, n) ? [[n, valueFor(r.values, n)!]] : []))));
    const newest = (i: number) =>
      new Map(
        names.flatMap((n) => {
          const all = this.records.map((r) => valueFor(r.values, n)).filter((v): v is string => v !== undefined);
          return all.length ? [[n, all[Math.min(i, all.length - 1)]!]] : [];
        }),
      );
    return [...ranked.slice(0, tries), ...Array.from({ length: tries }, (_, i) => newest(i))];
  }
}

function walk(node: unknown, key: string, into: Map<string, string>): void {
  if (Array.isArray(node)) for (const item of node) walk(item, key, into);
  else if (node && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) walk(v, k === 'id' && key ? `${key}Id` : k, into);
  else if (typeof node === 'string' && node && IDENTIFIER.test(key) && !OWN.has(key) && !into.has(key))
    into.set(key, node);
}

/** A record's value for a name: its own, else one whose name ends the same way (id → transactionId). */
function valueFor(values: Map<string, string>, name: string): string | undefined {
  if (values.has(name)) return values.get(name);
  const lower = name.toLowerCase();
  for (const [k, v] of values) if (k.toLowerCase() === lower || k.toLowerCase().endsWith(lower)) return v;
  return undefined;
}

const identifiers = (value: Record<string, unknown>) =>
  Object.keys(value).filter((k) => IDENTIFIER.test(k) && !OWN.has(k) && typeof value[k] === 'string');

/** One check per operation: its success answer reached, on state the run made (run last, one at a time). */
export function successChecks(operations: readonly ContractOperation[]): Check[] {
  return operations.map((op) => ({
    operationId: op.operationId,
    tags: doc.paths[op.path][op.verb.toLowerCase()].tags ?? [],
    kind: 'state' as const,
    name: 'its success answer is reached, on state the suite built',
    run: async (ctx) => {
      if (ctx.mock) return { skip: 'the mock keeps no state' };
      if (ctx.coverage?.successReached(op)) return;
      const example = op.request ? requestExamples(op)[0]!.value : undefined;
      const fields = example ? identifiers(example) : [];
      const params = op.parameters.filter((p) => p.in === 'path').map((p) => p.name);
      const choices = ctx.pool!.choices([...fields, ...params], op.path, TRIES);
      let last = '';
      for (const chosen of choices.length ? choices : [new Map<string, string>()]) {
        const value = example && Object.fromEntries(Object.entries(example).map(([k, v]) => [k, chosen.get(k) ?? v]));
        const body = value && signBody(op, formOf(op, value), value, ctx.creds);
        const pathParams = Object.fromEntries(
          params.map((p) => [p, chosen.get(p) ?? String(op.parameters.find((x) => x.name === p)!.example)]),
        );
        const answer = await send(ctx.base, { op, body, params: pathParams }, ctx.creds);
        const problem = judge(op, body, answer, ctx, pathParams);
        if (problem) throw new Error(problem);
        if (ctx.coverage?.successReached(op)) return;
        last = `${answer.json?.responseCode} ${answer.json?.responseMessage ?? ''}`;
      }
      throw new Error(
        `no success answer reached: ${choices.length} tries with the run's state, the last answered ${last} (fields from the run: ${[...fields, ...params].join(', ') || 'none'})`,
      );
    },
  }));
}

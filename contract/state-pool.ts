// The pool of identifiers the suite's approved answers leave, by field name (transactionID, cardID and
// cardKey, fingerprint, batchUUID, payId, agreementIdentification...): every check adds to it
// (checks.ts), and the success checks (state.ts) take the values an operation needs from it.

/** Names of the fields that identify something the gateway made (what one operation answers and another takes). */
export const IDENTIFIER = /(ID|Id|UUID|Key|Reference|Identification|fingerprint|payId|Token)$/;
/** Fields never taken from the pool: the caller's own account and credentials. */
export const OWN = new Set(['merchantUUID', 'partnerUUID', 'apiKey', 'accessToken', 'transactionReferenceID']);

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
    // Each record's value for each name, looked up once (the pool holds thousands of records).
    const found = this.records.map((r) => names.map((n) => valueFor(r.values, n)));
    const ranked = this.records
      .map((r, age) => ({ r, age, held: found[age]!.filter((v) => v !== undefined).length, near: near(r.path) }))
      .filter(({ held }) => held > 0)
      .sort((a, b) => b.held - a.held || b.near - a.near || a.age - b.age)
      .map(({ age }) => new Map(names.flatMap((n, i) => (found[age]![i] ? [[n, found[age]![i]!]] : []))));
    const newest = (i: number) =>
      new Map(
        names.flatMap((n, j) => {
          const all = found.map((f) => f[j]).filter((v): v is string => v !== undefined);
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

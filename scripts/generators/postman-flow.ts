// How the Postman collection's requests follow each other. The spec's examples are one coherent
// story: processCapture's example captures the transactionID that processAuth's result example
// answers, checkTDSAuth uses the threeDSToken checkEnrollment answered, and so on. So a value in a
// request example that another operation's result example *produces* (holds without having been
// sent it) is a reference: in the collection it becomes a variable, its default the example's
// value, set by the producer's test script from the real answer. Requests run producers first.
//
// Two rules the examples cannot show by value:
// - a request sending `X` and `XReplace` (cardKey, cardKeyReplace: the stored card's rotating key)
//   makes XReplace the new X once processed (seed: "unless the request is refused");
// - an operation that ends what it is given (its summary starts Remove, Void, Delete or Cancel)
//   runs after the others that use the same thing.
import { exampleValue, type Doc, type Operation } from '../lib/contract.ts';

export type Path = (string | number)[];
export interface Produced {
  variable: string;
  producer: string;
  path: Path;
  value: string;
}

/** A value worth following: an identifier or token, not a date, amount, name or constant. */
const traceable = (value: unknown): value is string =>
  typeof value === 'string' &&
  value.length >= 6 &&
  /\d/.test(value) &&
  /[A-Za-z-]/.test(value) &&
  !/^\d{4}-\d{2}-\d{2}/.test(value) &&
  !/^[+\d\s]+$/.test(value);

// Hashes are computed, credentials are the collection's own variables, and references
// (transactionReferenceID, reference) are the merchant's own, only echoed: none is followed.
const NOT_FOLLOWED = /hash$|^hash|^merchantUUID$|^partnerUUID$|^apiKey$|^transactionReferenceID$|^reference$/i;

function strings(node: unknown, path: Path, out: { path: Path; value: string }[]): void {
  if (Array.isArray(node)) for (const [i, v] of node.entries()) strings(v, [...path, i], out);
  else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) strings(v, [...path, k], out);
  else if (traceable(node) && !NOT_FOLLOWED.test(String(path.at(-1)))) out.push({ path, value: node });
}

export const requestExample = (doc: Doc, op: Operation): Record<string, unknown> | undefined =>
  op.examples.request[0] ? (exampleValue(doc, op.examples.request[0]) as Record<string, unknown>) : undefined;

/** What an operation sends: its body example's values and its parameters' examples. */
function sent(doc: Doc, op: Operation): Set<string> {
  const out: { path: Path; value: string }[] = [];
  strings(requestExample(doc, op), [], out);
  const values = new Set(out.map((o) => o.value));
  for (const p of op.parameters) if (p.example !== undefined) values.add(p.example);
  return values;
}

/** Every value some operation's result example produces, by value (the first producer in document order). */
export function producedValues(doc: Doc, ops: Operation[]): Map<string, Produced> {
  const produced = new Map<string, Produced>();
  for (const op of ops) {
    const result = op.examples.result?.[0] ? exampleValue(doc, op.examples.result[0]) : undefined;
    if (!result || typeof result !== 'object') continue;
    const own = sent(doc, op);
    const found: { path: Path; value: string }[] = [];
    strings(result, [], found);
    for (const { path, value } of found) {
      if (own.has(value) || produced.has(value)) continue;
      produced.set(value, { variable: `${op.operationId}.${path.join('.')}`, producer: op.operationId, path, value });
    }
  }
  return produced;
}

/** The variable a request's field or parameter takes, if its example value is produced elsewhere. */
export function consumedBy(
  doc: Doc,
  op: Operation,
  produced: Map<string, Produced>,
): { fields: Map<string, Produced>; params: Map<string, Produced> } {
  const fields = new Map<string, Produced>();
  const params = new Map<string, Produced>();
  const body = requestExample(doc, op) ?? {};
  for (const [name, value] of Object.entries(body)) {
    const p = typeof value === 'string' ? produced.get(value) : undefined;
    if (p && p.producer !== op.operationId && !NOT_FOLLOWED.test(name)) fields.set(name, p);
  }
  for (const param of op.parameters) {
    const p = param.example === undefined ? undefined : produced.get(param.example);
    if (p && p.producer !== op.operationId) params.set(param.name, p);
  }
  return { fields, params };
}

/**
 * Values a request sends as `XReplace` become the value of X's variable once it is processed; a later
 * example that sends that value means the same variable. Registered in `produced` under the same
 * variable, so that consumedBy() finds them; answered as [field, variable] pairs per operation.
 */
export function rotations(
  doc: Doc,
  ops: Operation[],
  produced: Map<string, Produced>,
): Map<string, [string, string][]> {
  const out = new Map<string, [string, string][]>();
  // Repeat until nothing new: a replacement may itself be replaced by a later request.
  for (let changed = true; changed; ) {
    changed = false;
    for (const op of ops) {
      const body = requestExample(doc, op) ?? {};
      for (const [name, value] of Object.entries(body)) {
        const replacement = body[`${name}Replace`];
        const p = typeof value === 'string' ? produced.get(value) : undefined;
        if (!p || typeof replacement !== 'string') continue;
        const pairs = out.get(op.operationId) ?? [];
        if (!pairs.some(([f]) => f === `${name}Replace`)) {
          pairs.push([`${name}Replace`, p.variable]);
          out.set(op.operationId, pairs);
        }
        if (!produced.has(replacement)) {
          produced.set(replacement, { ...p, value: replacement });
          changed = true;
        }
      }
    }
  }
  return out;
}

export const endsWhatItIsGiven = (op: Operation): boolean => /^(Remove|Void|Delete|Cancel)\b/.test(op.summary);

/** Producers before their consumers; otherwise document order, with operations that end things last. */
export function runOrder(doc: Doc, ops: Operation[], produced: Map<string, Produced>): Operation[] {
  const deps = new Map(
    ops.map((op) => {
      const { fields, params } = consumedBy(doc, op, produced);
      return [
        op.operationId,
        new Set([...fields.values(), ...params.values()].map((p) => p.producer).filter((id) => id !== op.operationId)),
      ];
    }),
  );
  const done = new Set<string>();
  const order: Operation[] = [];
  while (order.length < ops.length) {
    const ready = ops.filter(
      (op) =>
        !done.has(op.operationId) &&
        [...deps.get(op.operationId)!].every((d) => done.has(d) || !ops.some((o) => o.operationId === d)),
    );
    if (!ready.length)
      throw new Error(
        `Postman: the examples refer to each other in a cycle among ${ops
          .filter((op) => !done.has(op.operationId))
          .map((op) => op.operationId)
          .join(', ')}`,
      );
    const next = ready.find((op) => !endsWhatItIsGiven(op)) ?? ready[0]!;
    done.add(next.operationId);
    order.push(next);
  }
  return order;
}

// Changes to what the contract says beyond JSON Schema, read from its own extensions: which
// operations and methods exist (x-methods, x-operation, webhooks), what each method answers (the
// method → result map), its success status and media type, its credentials (body credentials,
// security headers and their names), its hashes and their recipes (x-hash-recipes), and body limits.
// Redocly's diff reads none of these.
import { ownMediaType } from '../lib/protocols.ts';
import { contractOperations, type Doc, type HashUse, type Operation } from '../lib/contract.ts';
import { verdict, type Change } from './change.ts';

const label = (op: Operation) => (op.webhook ? `webhook ${op.path}` : op.operationId);
const where = (op: Operation) =>
  op.method
    ? `${op.verb.toUpperCase()} ${op.path} method ${op.method}`
    : op.webhook
      ? `webhook ${op.path}`
      : `${op.verb.toUpperCase()} ${op.path}`;

/** The header a security scheme asks for, named as the wire names it. */
const header = (doc: Doc, scheme: string): string => doc.components?.securitySchemes?.[scheme]?.name ?? scheme;

// What runtime/signing.ts computes a hash from; the rest of a recipe is prose, provenance, a worked
// example, or alternatives a server also accepts (such as `legacy`).
const CORE = ['algorithm', 'lowercase', 'parts', 'key', 'message'];
const PROSE = ['summary', 'example', 'inferred', 'source'];
const pick = (r: object | undefined, keep: (k: string) => boolean) =>
  r ? JSON.stringify(Object.fromEntries(Object.entries(r).filter(([k]) => keep(k)))) : undefined;
const recipeCore = (doc: Doc, name: string) => pick(doc['x-hash-recipes']?.[name], (k) => CORE.includes(k));
const recipeAlternatives = (doc: Doc, name: string) =>
  pick(doc['x-hash-recipes']?.[name], (k) => !CORE.includes(k) && !PROSE.includes(k));

// No limit declared reads as no limit at all.
const limit = (doc: Doc): number => doc['x-limits']?.maxBodyBytes ?? Number.POSITIVE_INFINITY;
/** The spec's own media type, where its first wire format declares it. */
const ownType = (doc: Doc): string => ownMediaType(doc) ?? "the spec's own media type";

const hashKey = (h: HashUse) => `${h.in ?? 'body'}:${h.name}`;

export function contractChanges(base: Doc, revision: Doc): Change[] {
  const out: Change[] = [];
  const add = (op: Operation, kind: string, message: string, clients: boolean, servers: boolean, added = false) =>
    out.push({
      kind,
      operations: [label(op)],
      message: `${where(op)}: ${message}`,
      ...verdict(clients, servers, added),
    });
  const before = new Map(contractOperations(base).map((op) => [label(op), op]));
  const after = new Map(contractOperations(revision).map((op) => [label(op), op]));

  for (const [id, op] of before) {
    if (!after.has(id))
      add(
        op,
        op.method ? 'method-removed' : op.webhook ? 'webhook-removed' : 'operation-removed',
        `${op.method ? 'method' : op.webhook ? 'webhook' : 'operation'} ${id} removed.`,
        true,
        false,
      );
  }
  for (const [id, op] of after) {
    if (!before.has(id))
      add(
        op,
        op.method ? 'method-added' : op.webhook ? 'webhook-added' : 'operation-added',
        `${op.method ? 'method' : op.webhook ? 'webhook' : 'operation'} ${id} added.`,
        false,
        true,
        true,
      );
  }

  for (const [id, a] of after) {
    const b = before.get(id);
    if (!b) continue;
    if (b.verb !== a.verb || b.path !== a.path || b.method !== a.method)
      add(a, 'operation-moved', `moved from ${where(b)}.`, true, true);
    // On a shared path the descriptor is the only thing tying a method to its result.
    for (const key of ['request', 'result', 'refusal'] as const) {
      if (b[key] !== a[key])
        add(a, `${key}-schema-changed`, `${key} schema changed from ${b[key]} to ${a[key]}.`, true, true);
    }
    if (b.status !== a.status)
      add(a, 'status-changed', `success status changed from ${b.status} to ${a.status}.`, true, true);
    // No resultType: the spec's own media type (a structured answer).
    if (b.resultType !== a.resultType)
      add(
        a,
        'result-type-changed',
        `result media type changed from ${b.resultType ?? ownType(base)} to ${a.resultType ?? ownType(revision)}.`,
        true,
        true,
      );

    const bc = new Set(b.credentials ?? []);
    const ac = new Set(a.credentials ?? []);
    for (const c of ac) if (!bc.has(c)) add(a, 'credentials-added', `now takes body credentials ${c}.`, true, true);
    for (const c of bc)
      if (!ac.has(c)) add(a, 'credentials-removed', `no longer takes body credentials ${c}.`, true, true);
    // Per operation by scheme; a scheme whose header is renamed is reported once, below.
    const bs = new Set(b.security);
    const as = new Set(a.security);
    for (const h of as)
      if (!bs.has(h)) add(a, 'credential-header-added', `now requires the header ${header(revision, h)}.`, true, false);
    for (const h of bs)
      if (!as.has(h))
        add(a, 'credential-header-removed', `no longer requires the header ${header(base, h)}.`, false, true);

    for (const [list, side] of [
      ['hashes', 'request'],
      ['resultHashes', 'result'],
    ] as const) {
      const bm = new Map((b[list] ?? []).map((h) => [hashKey(h), h]));
      const am = new Map((a[list] ?? []).map((h) => [hashKey(h), h]));
      // A hash the request must carry is a client's work; one the result carries is a server's.
      for (const [k, h] of am) {
        const old = bm.get(k);
        if (!old)
          add(
            a,
            `${side}-hash-added`,
            `the ${side} now carries the hash ${h.name} (recipe ${h.recipe}).`,
            side === 'request',
            side === 'result',
          );
        else if (old.recipe !== h.recipe || old.secret !== h.secret)
          add(
            a,
            `${side}-hash-recipe-changed`,
            `the hash ${h.name} is now computed by the recipe ${h.recipe} (was ${old.recipe}).`,
            true,
            true,
          );
      }
      for (const [k, h] of bm)
        if (!am.has(k))
          add(
            a,
            `${side}-hash-removed`,
            `the ${side} no longer carries the hash ${h.name}.`,
            side === 'result',
            side === 'request',
          );
    }

    // An operation's own limit (maxBodyBytes); the document-wide one is compared once, below.
    const [bl, al] = [b.maxBodyBytes ?? limit(base), a.maxBodyBytes ?? limit(revision)];
    if ((b.maxBodyBytes !== undefined || a.maxBodyBytes !== undefined) && bl !== al && !b.webhook)
      add(a, 'body-limit-changed', `largest body changed from ${bl} to ${al} bytes.`, al < bl, al > bl);
    if (!b.deprecated && a.deprecated) add(a, 'operation-deprecated', 'deprecated.', false, false);
  }

  // Each recipe once, with every operation that signs (or whose result carries a hash) by it.
  const users = (doc: Doc, recipe: string) =>
    contractOperations(doc)
      .filter((op) => [...(op.hashes ?? []), ...(op.resultHashes ?? [])].some((h) => h.recipe === recipe))
      .map(label);
  for (const name of Object.keys(base['x-hash-recipes'] ?? {})) {
    if (!revision['x-hash-recipes']?.[name]) continue; // a removed recipe shows as the hashes that used it
    const operations = [...new Set([...users(base, name), ...users(revision, name)])];
    const pointer = `#/x-hash-recipes/${name}`;
    const [bc, ac] = [recipeCore(base, name), recipeCore(revision, name)];
    if (bc !== ac)
      out.push({
        kind: 'hash-recipe-changed',
        operations,
        pointer,
        message: `the recipe ${name} changed: ${bc} → ${ac}.`,
        ...verdict(true, true),
      });
    const [bx, ax] = [recipeAlternatives(base, name), recipeAlternatives(revision, name)];
    if (bx !== ax) {
      const [b, a] = [JSON.parse(bx!), JSON.parse(ax!)];
      const added = Object.keys(a).filter((k) => !(k in b));
      const removed = Object.keys(b).filter((k) => !(k in a));
      const changed = Object.keys(a).filter((k) => k in b && JSON.stringify(a[k]) !== JSON.stringify(b[k]));
      // Another form the gateway also accepts is for servers to accept; one withdrawn breaks the clients that sign by it.
      out.push({
        kind: 'hash-recipe-alternatives-changed',
        operations,
        pointer,
        message: `the recipe ${name}'s other accepted forms: ${[...added.map((k) => `${k} added`), ...removed.map((k) => `${k} removed`), ...changed.map((k) => `${k} changed`)].join(', ')}.`,
        ...verdict(removed.length + changed.length > 0, added.length + changed.length > 0, added.length > 0),
      });
    }
  }

  const [bl, al] = [limit(base), limit(revision)];
  if (bl !== al)
    out.push({
      kind: 'body-limit-changed',
      operations: [],
      message: `x-limits: the largest body changed from ${bl} to ${al} bytes.`,
      ...verdict(al < bl, al > bl),
    });

  // The names of the body credentials and headers, for every operation at once.
  // (A version without x-body-credentials used the same fields without naming them.)
  const bb = JSON.stringify(base['x-body-credentials']);
  const ab = JSON.stringify(revision['x-body-credentials']);
  if (base['x-body-credentials'] && bb !== ab)
    out.push({
      kind: 'body-credential-fields-changed',
      operations: [],
      message: `x-body-credentials changed: ${bb} → ${ab}.`,
      ...verdict(true, true),
    });
  for (const [name, scheme] of Object.entries<any>(base.components?.securitySchemes ?? {})) {
    const now = revision.components?.securitySchemes?.[name];
    if (now && (now.name !== scheme.name || now.in !== scheme.in)) {
      out.push({
        kind: 'credential-header-renamed',
        operations: [],
        pointer: `#/components/securitySchemes/${name}`,
        message: `security scheme ${name} now reads ${now.in} ${now.name} (was ${scheme.in} ${scheme.name}).`,
        ...verdict(true, true),
      });
    }
  }
  return out;
}

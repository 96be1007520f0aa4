// The exact request schemas in the published document. Its components are the wire's: every request
// body points at a tolerant copy (…AsSent, …AsFormSent, x-tolerant-of: what the gateway takes), so
// the exact schemas the copies are made of (closed objects, upper-case codes: what the typed client
// sends) are used by no operation of the document. Tools make a model of every component and Redocly's
// recommended-strict refuses an unused one, so the published document keeps them out of its
// components, at its root under x-exact-requests, each by its own name: the operations' descriptors
// (`request`) and the exact schemas' own $refs point there. The package's readers (the contract
// suite, the sandbox, the version gate, the tests) take them back among the components with
// withExactSchemas; scripts/generators/tolerant-requests.ts (`published`) moves them out.
import type { Doc, DocNode } from './document.ts';

export const EXACT_REQUESTS = 'x-exact-requests';

const IN_COMPONENTS = '#/components/schemas/';
const AT_ROOT = `#/${EXACT_REQUESTS}/`;

/** A copy of `node` with every string `move` gives another value for replaced: pointers, wherever the document holds them. */
function repointed(node: unknown, move: (pointer: string) => string | undefined): any {
  if (typeof node === 'string') return move(node) ?? node;
  if (Array.isArray(node)) return node.map((n) => repointed(n, move));
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, repointed(v, move)]));
}

/** The schema name a pointer to a component schema (or into one) names, and the rest of the pointer. */
function named(pointer: string, prefix: string): { name: string; rest: string } | undefined {
  if (!pointer.startsWith(prefix)) return undefined;
  const [name, ...rest] = pointer.slice(prefix.length).split('/');
  return { name: name!, rest: rest.length ? `/${rest.join('/')}` : '' };
}

/**
 * The document with the schemas `names` moved out of its components to x-exact-requests, and every
 * pointer to them (a $ref, a descriptor's `request`) following them.
 */
export function withExactSchemasAtRoot<D extends Doc>(doc: D, names: ReadonlySet<string>): D {
  if (!names.size) return doc;
  const move = (pointer: string) => {
    const at = named(pointer, IN_COMPONENTS);
    return at && names.has(at.name) ? `${AT_ROOT}${at.name}${at.rest}` : undefined;
  };
  const schemas: Record<string, DocNode> = doc.components.schemas;
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => !names.has(name)));
  const exact = Object.fromEntries(Object.entries(schemas).filter(([name]) => names.has(name)));
  const out = repointed({ ...doc, components: { ...doc.components, schemas: kept } }, move);
  return { ...out, [EXACT_REQUESTS]: repointed(exact, move) };
}

/**
 * The document as the package reads it: the exact request schemas back among the components (and
 * every pointer to them), as the bundle step made it. A document without x-exact-requests (the
 * bundle itself, a release from before it) is answered as it is.
 */
export function withExactSchemas<D extends Doc>(doc: D): D {
  const exact: Record<string, DocNode> | undefined = doc[EXACT_REQUESTS];
  if (!exact) return doc;
  const move = (pointer: string) => {
    const at = named(pointer, AT_ROOT);
    return at ? `${IN_COMPONENTS}${at.name}${at.rest}` : undefined;
  };
  const { [EXACT_REQUESTS]: _moved, ...rest } = doc;
  const out = repointed(rest, move);
  out.components = { ...out.components, schemas: { ...out.components.schemas, ...repointed(exact, move) } };
  return out;
}

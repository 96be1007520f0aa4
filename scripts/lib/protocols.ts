// The spec's wire formats (x-wire-formats) as protocols, for the generators: each declaration given
// to the module that serves it (runtime/protocols/<id>.ts), its `#/…` settings resolved to what they
// point to (the JSON mode's version header is the ApiVersion parameter). generated/protocols.ts does
// the same for everything at run time.
import { createRequire } from 'node:module';
import path from 'node:path';
import { resolvePointer, type Doc } from '../../runtime/document.ts';
import { protocolSet, type Protocols } from '../../runtime/protocols/index.ts';
import type { Protocol, WireFormatDeclaration } from '../../runtime/protocols/protocol.ts';

/** A declaration with every `#/…` setting replaced by what it points to. */
export function resolvedDeclaration(doc: Doc, declaration: WireFormatDeclaration): WireFormatDeclaration {
  return Object.fromEntries(
    Object.entries(declaration).map(([key, value]) => [
      key,
      typeof value === 'string' && value.startsWith('#/') ? resolvePointer(doc, value) : value,
    ]),
  ) as WireFormatDeclaration;
}

export const protocolModule = (id: string) => `runtime/protocols/${id}.ts`;

/** The spec's declarations, in its order. A spec from before x-wire-formats has none. */
export const declarations = (doc: Doc): [string, WireFormatDeclaration][] =>
  Object.entries<WireFormatDeclaration>(doc['x-wire-formats'] ?? {});

/**
 * The declarations a bundle adds content for: every one but the spec's own, the first one when it
 * serves every path (its media type is the one the spec's files write).
 */
export const addedDeclarations = (doc: Doc): [string, WireFormatDeclaration][] =>
  declarations(doc).filter(([, d], i) => i > 0 || d.paths !== undefined);

/** The media type the spec's own files write its bodies in: its first wire format's, when that one serves every path. */
export function ownMediaType(doc: Doc): string | undefined {
  const first = declarations(doc)[0]?.[1];
  return first && first.paths === undefined ? first.request : undefined;
}

const require = createRequire(import.meta.url);
const ROOT = path.resolve(import.meta.dirname, '../..');
const made = new WeakMap<Doc, Protocols>();

/**
 * The spec's protocols, each from this package's module (loaded by its name in x-wire-formats,
 * synchronously): a spec bundled from elsewhere (an older ref, by the diff) is read by this code.
 */
export function protocolsOf(doc: Doc): Protocols {
  let set = made.get(doc);
  if (!set) {
    const all: Protocol[] = [];
    for (const [id, declaration] of declarations(doc)) {
      const module = require(path.join(ROOT, protocolModule(id))) as {
        protocol: (id: string, declaration: WireFormatDeclaration) => Protocol;
      };
      all.push(module.protocol(id, resolvedDeclaration(doc, declaration)));
    }
    set = protocolSet(all);
    made.set(doc, set);
  }
  return set;
}

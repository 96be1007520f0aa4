// generated/protocols.ts: the spec's wire formats (x-wire-formats) bound to their modules, one
// protocol per declaration from runtime/protocols/<id>.ts, given its settings (`#/…` ones resolved;
// the x- documentation left out). Everything that reads or writes a body at run time takes its
// protocols from here.
import type { Doc } from '../lib/contract.ts';
import { declarations, protocolModule, resolvedDeclaration } from '../lib/protocols.ts';
import { tsHeader } from './banner.ts';

/** A value without its x- keys (the spec's documentation of it), at any depth. */
function settings(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(settings);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !key.startsWith('x-'))
      .map(([key, inner]) => [key, settings(inner)]),
  );
}

const identifier = (id: string) =>
  `${id.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string = '') => c.toUpperCase())}Protocol`;

export function protocolsModule(doc: Doc): string {
  const all = declarations(doc);
  return [
    tsHeader(
      "The spec's wire formats (x-wire-formats), each bound to its protocol module (runtime/protocols/).",
    ).trimEnd(),
    '',
    ...all.map(([id]) => `import { protocol as ${identifier(id)} } from '../${protocolModule(id)}';`),
    "import { protocolSet } from '../runtime/protocols/index.ts';",
    '',
    "/** Every protocol of the contract, the spec's own first. */",
    'export const protocols = protocolSet([',
    ...all.map(
      ([id, declaration]) =>
        `  ${identifier(id)}(${JSON.stringify(id)}, ${JSON.stringify(settings(resolvedDeclaration(doc, declaration)))}),`,
    ),
    ']);',
    '',
  ].join('\n');
}

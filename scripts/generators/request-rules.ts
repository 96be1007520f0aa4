// docs/RULES.md's section on requests: what the gateway does with a body before it holds it to its
// schema, the mark that says so in the spec, and how the published document's request bodies say it
// to a validator made from them (their tolerant copies, tolerant-requests.ts). Written from the spec.
import { deref } from '../../runtime/document.ts';
import type { Doc, DocNode, Operation } from '../lib/contract.ts';
import { protocolModule, protocolsOf } from '../lib/protocols.ts';

/** The component schemas a request's fields $ref, through its forms. */
function fieldTypes(doc: Doc, request: string): Set<string> {
  const names = new Set<string>();
  const visit = (node: DocNode) => {
    const s = deref(doc, node);
    for (const form of s.oneOf ?? []) visit(form);
    for (const property of Object.values<DocNode>(s.properties ?? {}))
      if (typeof property?.$ref === 'string') names.add(property.$ref.split('/').pop()!);
  };
  visit({ $ref: request });
  return names;
}

const list = (names: string[]) =>
  names.length > 4 ? `${names.slice(0, 4).join(', ')} and ${names.length - 4} more` : names.join(', ');

export function requestRulesSection(doc: Doc, ops: Operation[]): string[] {
  const withBody = ops.filter((op) => op.request && !op.webhook);
  const schemas = doc.components.schemas;
  const normalised = Object.keys(schemas).filter((name) => schemas[name]['x-normalise'] === 'uppercase');
  // The protocols whose reader takes an empty value for a field not sent (the form/XML mode's).
  const emptyAbsent = protocolsOf(doc).all.filter((p) => p.asSent.emptyIsAbsent);
  const rows = [
    `| \`x-unknown-fields: ${doc['x-unknown-fields']?.policy}\` | the document | a body field no form of the operation declares is dropped (and logged); a field another form of it declares is kept, and refused by the form's schema | open: no \`additionalProperties: false\`; each field of another form \`false\` | ${withBody.length} operations with a body | server-stubs/core/request.ts (withoutUnknownFields) |`,
    ...normalised.map((name) => {
      const users = withBody.filter((op) => fieldTypes(doc, op.request!).has(name)).map((op) => op.operationId);
      return `| \`x-normalise: uppercase\` | \`${name}\` | read upper-cased before validation: taken in either letter case | \`${name}AnyCase\`: its values in any letter case | ${list(users.sort())} | server-stubs/core/request.ts (normalised) |`;
    }),
    ...emptyAbsent.map((protocol) => {
      const rule = (doc['x-wire-formats'][protocol.id]?.empty as { rule?: string } | undefined)?.rule;
      const served = withBody.filter((op) => protocol.paths === null || protocol.paths.includes(op.path));
      const copy = `As${protocol.id[0]!.toUpperCase()}${protocol.id.slice(1)}Sent`;
      return `| \`x-wire-formats\` ${protocol.id}.empty: \`${rule}\` | the ${protocol.label} mode | an empty value is the field not sent: \`customerIP=\` is no customerIP, a required field sent empty is missing | the mode's copy (\`…${copy}\`) takes '' for any field, asks every required one (and every \`if\`/\`dependentRequired\` trigger) for a value that is not '', and takes the text a boolean or number field is read from | ${served.length} operations of ${protocol.paths?.join(', ') ?? 'every path'} | ${protocolModule(protocol.id)} (its reader) |`;
    }),
  ];
  return [
    '',
    '## The rules about requests',
    '',
    'What the gateway does with a request body before it holds it to its schema. Each is a mark in the',
    "spec, kept by the server stubs (and so by the sandbox); the components' request schemas stay exact",
    '(closed objects, upper-case codes: the types and the typed client are made from them), and each',
    'request body of the published document points at a tolerant copy of its schema (`x-tolerant-of`,',
    'scripts/generators/tolerant-requests.ts) that says the rule to a validator generated from the',
    'document. test/contract/published-validator.test.ts holds the two to each other with fast-check:',
    "requests made from each operation's examples and changed as clients change them are accepted by",
    "the published document's validator (ajv, draft 2020-12) exactly when the sandbox takes them, in",
    'both modes (docs/WIRE-FORMATS.md, "Validating requests against the published document").',
    '',
    '| mark | where | what the gateway does | the published request body | operations | kept by |',
    '|---|---|---|---|---|---|',
    ...rows,
  ];
}

// What the docs' try-it console knows of each operation, projected at build time from the operation
// table (the client table's projection: how to call and sign it, the same the typed client reads)
// and the spec (the first request example, the parameters' examples, the sandbox's published test
// credentials, the recipes). The console in the page (console.ts) reads nothing else.
import type { ClientOperation } from '../../../runtime/client.ts';
import type { SigningContract } from '../../../runtime/sign-request.ts';
import { recipesOf } from '../hash-recipes.ts';
import { contractOperations, exampleValue, type Doc } from '../../lib/contract.ts';
import { clientTable } from '../client.ts';
import { scenarioCatalogue } from '../scenarios.ts';
import type { TryItScenarios } from './scenario-panel.ts';
import type { TableEntry } from '../operations.ts';
import { protocolsOf } from '../../lib/protocols.ts';

export interface TryItOperation {
  operationId: string;
  /** How to call and sign it (runtime/sign-request.ts reads it). */
  call: ClientOperation;
  parameters: readonly { name: string; in: 'path' | 'query'; example: string }[];
  /** The first request example, less what the console fills in (method, body credentials, hash fields). */
  body?: Record<string, unknown>;
  /** The body credential kinds its forms fill in (merchant, partner), or the header ones' merchant. */
  accounts: readonly string[];
}

export interface TryItData extends SigningContract {
  operations: TryItOperation[];
  /** The sandbox's published test credentials (info.x-sandbox). */
  sandbox: { merchantUUID: string; partnerUUID: string; apiKey: string; passphrase: string };
  /** Where the console sends by default when the page is not served by the sandbox itself. */
  defaultUrl: string;
  /** The media types of the spec's own requests and answers, which the console sends and reads. */
  requestType: string;
  answerType: string;
  /** What each operation may ask the sandbox for (x-sandbox-scenarios), and the header it goes in. */
  scenarios: TryItScenarios;
}

/** Each operation's scenarios as the console offers them: its outcomes, internalError, the faults (a value's default). */
function scenariosOf(doc: Doc): TryItScenarios {
  const c = scenarioCatalogue(doc, contractOperations(doc));
  const faults = Object.entries(c.faults).map(([name, f]) => (f.value ? `${name}=${f.value.default}` : name));
  const refusals = Object.entries(c.refusals)
    .filter(([, r]) => r.scenario)
    .map(([name]) => name);
  return {
    header: c.header,
    byOperation: Object.fromEntries(
      Object.entries(c.operations).map(([id, o]) => [id, [...o.outcomes.map((x) => x.name), ...refusals, ...faults]]),
    ),
  };
}

/** The fields the signer fills in whatever the body says: method, credentials and hashes of every form. */
function filledFields(call: ClientOperation, credentials: TryItData['credentials']): Set<string> {
  const filled = new Set(['method']);
  for (const form of call.forms ?? []) {
    for (const kind of form.fill) for (const f of [credentials[kind]!.id, credentials[kind]!.key]) if (f) filled.add(f);
    for (const h of form.hashes) filled.add(h.name);
  }
  return filled;
}

export function tryItData(doc: Doc, entries: TableEntry[]): TryItData {
  const credentials: TryItData['credentials'] = doc['x-body-credentials'];
  // Every entry, aliases included (an alias has its own path and page): projected as the client's.
  const calls = clientTable(
    doc,
    entries.map((e) => ({ ...e, aliasOf: null })),
  );
  const operations = entries.map((entry, i): TryItOperation => {
    const call = calls[i]!;
    const example = entry.examples.request[0];
    const value = example === undefined ? undefined : (exampleValue(doc, example) as Record<string, unknown>);
    const filled = filledFields(call, credentials);
    const kinds = new Set((call.forms ?? []).flatMap((f) => f.fill));
    if (call.headers) kinds.add('merchant');
    return {
      operationId: entry.operationId,
      call,
      parameters: entry.parameters.map((p) => ({ name: p.name, in: p.in, example: p.example ?? '' })),
      ...(value && call.forms
        ? { body: Object.fromEntries(Object.entries(value).filter(([k]) => !filled.has(k))) }
        : {}),
      accounts: [...kinds].sort(),
    };
  });
  const lower = new Set(operations.map((o) => o.operationId.toLowerCase()));
  // The page finds an operation's section by its id, which the docs write in lower case.
  if (lower.size !== operations.length)
    throw new Error('Two operationIds differ only in case: the try-it console cannot tell their pages apart');
  const { merchantUUID, partnerUUID, apiKey, passphrase } = doc.info['x-sandbox'];
  // The spec's server (its base_url's default): the sandbox npm start runs.
  const defaultUrl = doc.servers?.[0]?.variables?.base_url?.default;
  if (!defaultUrl) throw new Error('The spec names no default server for the try-it console');
  return {
    operations,
    recipes: recipesOf(doc),
    apiVersion: {
      name: doc.components.parameters.ApiVersion.name,
      value: doc.components.parameters.ApiVersion.schema.const,
    },
    credentials,
    sandbox: { merchantUUID, partnerUUID, apiKey, passphrase },
    defaultUrl,
    requestType: protocolsOf(doc).canonical.requestType,
    answerType: protocolsOf(doc).canonical.answerType,
    scenarios: scenariosOf(doc),
  };
}

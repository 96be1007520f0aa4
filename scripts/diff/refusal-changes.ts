// Changes to the refusal catalogue (spec/refusals.yaml): each refusal the package makes, by its stable
// code. The catalogue is a file of spec/ beside the bundled document, not in it, so each side of a diff
// reads it where that side keeps its spec (a git ref's archive, the working tree, a packed package's
// spec/) or, for a release snapshot, the entries `npm version` kept beside it
// (releases/refusals-X.Y.Z.json). A side whose catalogue could not be read is not compared; a side
// that had none (releases before the catalogue) is, as the catalogue's arrival.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Doc } from '../lib/contract.ts';
import { CATALOGUE_FILE, refusalCatalogues } from '../generators/refusal-catalogue.ts';
import { verdict, type Change } from './change.ts';

/** One refusal as a diff compares it: what a caller reads of it (the code only names it). */
export interface RefusalEntry {
  catalogue: string;
  code: string;
  responseCode: number;
  status?: number;
  message: string | readonly string[];
}

/**
 * What a version says of its refusals: its entries; null where the version had no catalogue; undefined
 * where nobody read it (then nothing is compared).
 */
export type Refusals = RefusalEntry[] | null | undefined;

/** The refusal entries of the spec under `root` (null when it has no catalogue file), read with its bundled document. */
export function refusalEntries(doc: Doc, root: string): RefusalEntry[] | null {
  if (!existsSync(path.join(root, CATALOGUE_FILE))) return null;
  return refusalCatalogues(doc, root).flatMap((c) =>
    c.texts.map(({ text }) => ({
      catalogue: c.name,
      code: text.code,
      responseCode: text.responseCode,
      ...(text.status === undefined ? {} : { status: text.status }),
      message: text.message,
    })),
  );
}

/** What a release snapshot keeps of its catalogue (releases/refusals-X.Y.Z.json). */
export interface RefusalSnapshot {
  refusals: RefusalEntry[] | null;
  /** Why a release has none, when it has none. */
  why?: string;
}

const words = (message: RefusalEntry['message']) => JSON.stringify(message);

/**
 * The catalogues every server of the contract makes (the stubs' own and the schema rules'); the others
 * are the sandbox's and its control API's, which ask nothing of a gateway's server.
 */
const GATEWAY_CATALOGUES = new Set(['refusals', 'validationRefusals']);
const ofGateway = (e: RefusalEntry) => GATEWAY_CATALOGUES.has(e.catalogue);

export function refusalChanges(base: Refusals, revision: Refusals): Change[] {
  if (base === undefined || revision === undefined) return [];
  if (base === null || revision === null) {
    if (base === revision) return [];
    return base === null
      ? [
          {
            kind: 'refusal-catalogue-added',
            operations: [],
            message: `the refusal catalogue (${CATALOGUE_FILE}) added: ${revision!.length} refusals, each with a stable code.`,
            ...verdict(false, false, true),
          },
        ]
      : [
          {
            kind: 'refusal-catalogue-removed',
            operations: [],
            message: `the refusal catalogue (${CATALOGUE_FILE}) removed, with its ${base.length} codes.`,
            ...verdict(true, true),
          },
        ];
  }
  const out: Change[] = [];
  const add = (code: string, kind: string, message: string, v: ReturnType<typeof verdict>) =>
    out.push({ kind, operations: [], subject: code, message: `refusal ${code}: ${message}`, ...v });
  const before = new Map(base.map((e) => [e.code, e]));
  const after = new Map(revision.map((e) => [e.code, e]));
  // A new refusal of the gateway's is a new obligation for a server not built on the stubs; a client
  // meets it as one more responseMessage of a responseCode it already handles.
  for (const [code, e] of after)
    if (!before.has(code))
      add(
        code,
        'refusal-added',
        `added (${e.catalogue}, responseCode ${e.responseCode}).`,
        verdict(false, ofGateway(e), true),
      );
  // Gone: a server written for the base may still refuse what it named; clients lose nothing they relied on.
  for (const [code, e] of before)
    if (!after.has(code)) add(code, 'refusal-removed', `removed (${e.catalogue}).`, verdict(false, false, true));
  for (const [code, a] of after) {
    const b = before.get(code);
    if (!b) continue;
    // Moved into the gateway's catalogues, it asks servers to make it.
    if (b.catalogue !== a.catalogue)
      add(
        code,
        'refusal-catalogue-changed',
        `moved from ${b.catalogue} to ${a.catalogue}.`,
        verdict(false, ofGateway(a) && !ofGateway(b), true),
      );
    // What clients branch on: the responseCode and the HTTP status.
    if (b.responseCode !== a.responseCode)
      add(
        code,
        'refusal-response-code-changed',
        `responseCode ${b.responseCode} → ${a.responseCode}.`,
        verdict(true, ofGateway(a) || ofGateway(b)),
      );
    if (b.status !== a.status)
      add(
        code,
        'refusal-status-changed',
        `HTTP status ${b.status ?? "the operation's own"} → ${a.status ?? "the operation's own"}.`,
        verdict(true, ofGateway(a) || ofGateway(b)),
      );
    // A message may be reworded (spec/refusals.yaml): a client reading it sees the new words.
    if (words(b.message) !== words(a.message))
      add(code, 'refusal-message-changed', `message ${words(b.message)} → ${words(a.message)}.`, verdict(false, false));
  }
  return out;
}

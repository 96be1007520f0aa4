// Changes to the refusal catalogue (spec/refusals.yaml): each refusal the package makes, by its stable
// code. The catalogue is a file of spec/ beside the bundled document, not in it, so each side of a diff
// reads it where that side keeps its spec (a git ref's archive, the working tree, a packed package's
// spec/) or, for a release snapshot, the entries `npm version` kept beside it
// (releases/refusals-X.Y.Z.json). A side whose catalogue could not be read is not compared; a side
// that had none (releases before the catalogue) is, as the catalogue's arrival.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Doc } from '../lib/contract.ts';
import { CATALOGUE_FILE, type MadeBy, refusalCatalogues } from '../generators/refusal-catalogue.ts';
import { verdict, type Change } from './change.ts';

/** One refusal as a diff compares it: what a caller reads of it (the code only names it). */
export interface RefusalEntry {
  catalogue: string;
  /** Who makes it (its catalogue's madeBy); absent where the catalogue was written before the field. */
  madeBy?: MadeBy;
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

/**
 * The refusal entries of the spec under `root` (null when it has no catalogue file), read with its
 * bundled document. `past`: an earlier version's spec (a git ref, a packed package).
 */
export function refusalEntries(doc: Doc, root: string, past = false): RefusalEntry[] | null {
  if (!existsSync(path.join(root, CATALOGUE_FILE))) return null;
  return refusalCatalogues(doc, root, past).flatMap((c) =>
    c.texts.map(({ text }) => ({
      catalogue: c.name,
      ...(c.madeBy === undefined ? {} : { madeBy: c.madeBy }),
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
 * The catalogues every server made in a spec written before `madeBy` (b03d7d9, which wrote the
 * catalogue, up to the commit that added the field): the stubs' own and the schema rules'.
 */
const SERVERS_BEFORE_MADE_BY = new Set(['refusals', 'validationRefusals']);
/** Whether every server of the contract makes it (else the sandbox alone, which asks nothing of a server). */
const ofServers = (e: RefusalEntry) =>
  e.madeBy === undefined ? SERVERS_BEFORE_MADE_BY.has(e.catalogue) : e.madeBy === 'servers';

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
  // A new refusal that every server makes is a new obligation for a server not built on the stubs; a client
  // meets it as one more responseMessage of a responseCode it already handles.
  for (const [code, e] of after)
    if (!before.has(code))
      add(
        code,
        'refusal-added',
        `added (${e.catalogue}, responseCode ${e.responseCode}).`,
        verdict(false, ofServers(e), true),
      );
  // Gone: a server written for the base may still refuse what it named; clients lose nothing they relied on.
  for (const [code, e] of before)
    if (!after.has(code)) add(code, 'refusal-removed', `removed (${e.catalogue}).`, verdict(false, false, true));
  for (const [code, a] of after) {
    const b = before.get(code);
    if (!b) continue;
    // Moved into a catalogue every server makes, it asks servers to make it.
    if (b.catalogue !== a.catalogue)
      add(
        code,
        'refusal-catalogue-changed',
        `moved from ${b.catalogue} to ${a.catalogue}.`,
        verdict(false, ofServers(a) && !ofServers(b), true),
      );
    // Its catalogue now made by every server (or no longer): the first asks servers to make it.
    else if (ofServers(a) !== ofServers(b))
      add(
        code,
        'refusal-made-by-changed',
        `now made by ${ofServers(a) ? 'every server' : 'the sandbox alone'} (${a.catalogue}).`,
        verdict(false, ofServers(a), true),
      );
    // What clients branch on: the responseCode and the HTTP status.
    if (b.responseCode !== a.responseCode)
      add(
        code,
        'refusal-response-code-changed',
        `responseCode ${b.responseCode} → ${a.responseCode}.`,
        verdict(true, ofServers(a) || ofServers(b)),
      );
    if (b.status !== a.status)
      add(
        code,
        'refusal-status-changed',
        `HTTP status ${b.status ?? "the operation's own"} → ${a.status ?? "the operation's own"}.`,
        verdict(true, ofServers(a) || ofServers(b)),
      );
    // A message may be reworded (spec/refusals.yaml): a client reading it sees the new words.
    if (words(b.message) !== words(a.message))
      add(code, 'refusal-message-changed', `message ${words(b.message)} → ${words(a.message)}.`, verdict(false, false));
  }
  return out;
}

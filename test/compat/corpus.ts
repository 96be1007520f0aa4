// The compatibility corpus: requests and sample answers of the real gateway's public clients, each
// with its citation, converted to the JSON mode and the seed's names (see corpus/README.md).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface CorpusEntry {
  id: string;
  citation: string;
  kind: 'request' | 'answer';
  /** The operationId, or the method name on the entry's path. */
  operation: string;
  /** The path the client posts to, as it writes it (/token//processCard included). */
  path: string;
  /** The client's hash form: the recipe's current one, or its legacy form (x-hash-recipes). */
  signing?: 'current' | 'legacy';
  /** An entry whose answer this one needs first (its transactionID or cardID). */
  after?: string;
  body: Record<string, unknown>;
  expect?: { outcome: 'approved' | 'declined' | 'refused' | 'pending' | 'any'; responseCode?: number; responseMessage?: string };
  notes?: string;
  client: string;
}

const folder = path.join(import.meta.dirname, 'corpus');

export function loadCorpus(): CorpusEntry[] {
  return readdirSync(folder)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .flatMap((file) => {
      const { client, entries } = JSON.parse(readFileSync(path.join(folder, file), 'utf8')) as { client: { key: string }; entries: Omit<CorpusEntry, 'client'>[] };
      return entries.map((entry) => ({ ...entry, client: client.key }));
    });
}

// The compatibility table of docs/WIRE-FORMATS.md, written from the corpus and the decisions: for each
// public integration, the mode it speaks, the operations it calls and whether the sandbox serves each
// call. compat-table.test.ts holds the doc to it; compat.test.ts proves every "served" call against the
// sandbox, in the mode its client uses.
import { notAccepted, outcomeNotReproduced, outOfScope } from './compat-decisions.ts';
import { loadCorpusFiles, type CorpusEntry } from './corpus.ts';

export const TABLE_START =
  '<!-- compat-table: written from test/compat by compat-table.test.ts; do not edit by hand -->';
export const TABLE_END = '<!-- /compat-table -->';

const MODES: Record<string, string> = {
  form: 'form/XML',
  json: 'JSON',
  multipart: 'multipart form/XML',
  'browser-form': 'hosted page',
};

/** What the sandbox does with one call: served, refused on purpose, or not this API at all. */
function status(entry: CorpusEntry): { mark: string; why?: string | undefined } {
  if (entry.id in outOfScope) return { mark: '–', why: outOfScope[entry.id] };
  if (entry.id in notAccepted) return { mark: '✗', why: notAccepted[entry.id] };
  if (entry.id in outcomeNotReproduced) return { mark: '✓*', why: outcomeNotReproduced[entry.id] };
  return { mark: '✓' };
}

const code = (text: string) => `\`${text}\``;

export function compatTable(): string {
  const notes: string[] = [];
  const files = loadCorpusFiles().filter(({ entries }) => entries.some((e) => e.kind === 'request'));
  const rows = files.map(({ client, entries }) => {
    const requests = entries.filter((e) => e.kind === 'request');
    const modes = [...new Set(requests.map((e) => MODES[e.wire ?? 'form'] ?? e.wire!))];
    const paths = [...new Set(requests.map((e) => e.path))];
    // One cell per operation: its calls' marks, a note for each call not plainly served.
    const operations = new Map<string, string[]>();
    for (const entry of requests) {
      const { mark, why } = status(entry);
      let text = mark;
      if (why) {
        notes.push(`${notes.length + 1}. ${code(entry.id)} (${entry.operation}): ${why}`);
        text += `<sup>${notes.length}</sup>`;
      }
      operations.set(entry.operation, [...(operations.get(entry.operation) ?? []), text]);
    }
    const cells = [...operations].map(([op, marks]) => {
      const distinct = [...new Set(marks)];
      return `${op} ${distinct.length === 1 && distinct[0] === '✓' ? '✓' : distinct.join(' ')}`;
    });
    return `| ${client.repo}@${client.commit.slice(0, 8)} | ${client.language} | ${modes.join(', ')} | ${paths.map(code).join(' ')} | ${client.hashForm} | ${cells.join(', ')} |`;
  });
  return [
    TABLE_START,
    '| integration | language | mode | paths it posts to | hash form | operations it calls (✓ served) |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    '✓ the sandbox serves every call of the corpus to that operation, in the mode the client uses; ✓* served,',
    'with an outcome other than the one the client recorded; ✗ refused on purpose; – not this API. Notes:',
    '',
    ...notes,
    '',
    'Replayed against the sandbox with what the client asserts or reads of each answer (the outcome, the',
    'words, the fields it cannot do without): ' +
      files
        .map(({ client, entries }) => {
          const replayed = entries.filter(
            (e) =>
              e.kind === 'request' &&
              e.expect &&
              e.expect.outcome !== 'any' &&
              !(e.id in outcomeNotReproduced) &&
              !(e.id in notAccepted) &&
              !(e.id in outOfScope),
          );
          return replayed.length ? `${client.repo} ${replayed.length} calls` : '';
        })
        .filter(Boolean)
        .join(', ') +
      '.',
    TABLE_END,
  ].join('\n');
}

/** The doc with its table section replaced by `table`; throws when the doc has no marked section. */
export function withCompatTable(doc: string, table: string): string {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`the doc has no section between "${TABLE_START}" and "${TABLE_END}"`);
  return doc.slice(0, start) + table + doc.slice(end + TABLE_END.length);
}

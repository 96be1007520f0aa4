// Every answer in the corpus that the real gateway gave a public client (recorded transcripts, the
// clients' fixtures of its answers), judged by the contract suite's own answer checks as if a server
// under test had sent it: the status, the content type, the XML read strictly (the form protocol's reader), the
// result or refusal schema, the sums and the value rules (contract/checks.ts: recordedAnswerViolations).
// Each must pass: a suite that fails the real service is wrong. An answer in the form/XML mode goes
// through as its bytes (wireBody) or, where its client kept only the parsed elements, written by the
// form protocol's writer; a JSON-mode answer as its JSON. Its request and the keys that signed it are
// not known, so echoes and result hashes are the one thing not checked here (compat.test.ts holds the
// sandbox's own answers to them).
import { describe, expect, it } from 'vitest';
import { answerOf, recordedAnswerViolations } from '../../contract/index.ts';
import { protocols } from '../../generated/protocols.ts';
import { loadCorpus, type LoadedEntry } from './corpus.ts';
import { operationOf } from './operation-of.ts';

const answers = loadCorpus().filter((e) => e.kind === 'answer');

/** The answer as the server would have sent it, with the operation's declared status. */
function responseOf(entry: LoadedEntry, status: number): Response {
  const protocol = protocols.byId(entry.wire === 'json' ? 'json' : 'form')!;
  const text = entry.wireBody ?? protocol.writeAnswer(entry.body);
  return new Response(text, { status, headers: { 'content-type': protocol.answerType } });
}

describe('the recorded answers of the real gateway pass the contract suite’s answer checks', () => {
  it('every answer says which mode it was given in', () => {
    expect(answers.filter((e) => e.wire !== 'form' && e.wire !== 'json').map((e) => e.id)).toEqual([]);
    expect(answers.length).toBeGreaterThan(0);
  });

  it.each(answers.map((e) => [`${e.id} (${e.client}, ${e.operation}, ${e.wire})`, e] as const))(
    '%s',
    async (_name, entry) => {
      const op = operationOf(entry);
      const protocol = protocols.byId(entry.wire === 'json' ? 'json' : 'form')!;
      const a = await answerOf(responseOf(entry, op.status), op, protocol);
      expect(recordedAnswerViolations(op, a) ?? 'accepted').toBe('accepted');
    },
  );
});

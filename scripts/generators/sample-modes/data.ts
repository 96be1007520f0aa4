// What the docs page's sample-mode view (view.ts) knows, projected at build time from the samples
// (docs-view.ts): for each operation that also takes the form/XML mode, that mode's media types and
// its samples by language label. The JSON mode's samples are the page's own x-codeSamples.
import type { Doc, Operation } from '../../lib/contract.ts';
import { formAnswers, formSamples } from '../docs-view.ts';

export interface ModeOperation {
  /** The operationId, as the page writes its section's id (lower case). */
  id: string;
  /** The form/XML mode's samples by language label (curl, PHP…); a language without one shows `fallback`'s. */
  samples: Record<string, string>;
  /** Its answers in the mode (XML), by the label the page's example picker shows. */
  answers: Record<string, string>;
}

export interface SampleModesData {
  /** The form/XML mode's request and answer media types (x-wire-formats.form). */
  request: string;
  answer: string;
  /** The language whose form sample stands in for a language that has none. */
  fallback: string;
  /** Said above a form sample; `{language}` is the one the reader picked, when it has no form sample. */
  caption: string;
  missing: string;
  /** Said above an answer shown in the mode. */
  answerCaption: string;
  operations: ModeOperation[];
}

export function sampleModesData(doc: Doc, ops: Operation[]): SampleModesData {
  const form = doc['x-wire-formats'].form;
  const operations = ops
    .filter((op) => !op.webhook)
    .map((op) => ({
      id: op.operationId.toLowerCase(),
      samples: Object.fromEntries(formSamples(op, doc).map((s) => [s.label, s.source])),
      answers: formAnswers(op, doc),
    }))
    .filter((op) => Object.keys(op.samples).length);
  const fallback = 'curl';
  for (const op of operations) {
    if (!(fallback in op.samples))
      throw new Error(`${op.id}: a form/XML sample in other languages but not ${fallback}`);
    const source = ops.find((o) => o.operationId.toLowerCase() === op.id)!;
    const count =
      (source.resultType && source.resultType !== 'application/json' ? [] : (source.examples.result ?? [])).length +
      (source.examples.refusal ?? []).length;
    // The page finds an answer by the label its picker shows: two answers under one label would be one.
    if (Object.keys(op.answers).length !== count) throw new Error(`${op.id}: two answer examples share a summary`);
  }
  return {
    request: form.request,
    answer: form.answer,
    fallback,
    caption: `The form/XML mode (docs/WIRE-FORMATS.md): the same fields form-encoded, no version header; the answer is XML under <${form.xml.name}>.`,
    missing: `No {language} sample of the form/XML mode (the typed client speaks JSON): the ${fallback} one below sends it.`,
    answerCaption: `The answer in the form/XML mode (${form.answer}), as the example picked above.`,
    operations,
  };
}

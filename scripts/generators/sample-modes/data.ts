// What the docs page's sample-mode view (view.ts) knows, projected at build time from the samples
// (docs-view.ts): for each protocol added beside the spec's own (the form/XML mode), its media types,
// its words, and for each operation that takes it, its samples by language label and its answers.
// The spec's own protocol's samples are the page's own x-codeSamples.
import type { Protocol } from '../../../runtime/protocols/protocol.ts';
import type { Doc, Operation } from '../../lib/contract.ts';
import { protocolsOf } from '../../lib/protocols.ts';
import { answersIn, samplesIn } from '../docs-view.ts';

export interface ModeOperation {
  /** The operationId, as the page writes its section's id (lower case). */
  id: string;
  /** The mode's samples by language label (curl, PHP…); a language without one shows `fallback`'s. */
  samples: Record<string, string>;
  /** Its answers in the mode, by the label the page's example picker shows. */
  answers: Record<string, string>;
}

export interface SampleMode {
  /** The protocol's id (x-wire-formats). */
  id: string;
  /** Its request and answer media types: picking either shows the mode. */
  request: string;
  answer: string;
  /** The language whose sample stands in for a language that has none. */
  fallback: string;
  /** Said above a sample of the mode; `{language}` is the one the reader picked, when it has none. */
  caption: string;
  missing: string;
  /** Said above an answer shown in the mode. */
  answerCaption: string;
  operations: ModeOperation[];
}

export interface SampleModesData {
  modes: SampleMode[];
}

function sampleMode(protocol: Protocol, doc: Doc, ops: Operation[]): SampleMode {
  const operations = ops
    .filter((op) => !op.webhook)
    .map((op) => ({
      id: op.operationId.toLowerCase(),
      samples: Object.fromEntries(samplesIn(protocol, op, doc).map((s) => [s.label, s.source])),
      answers: answersIn(protocol, op, doc),
    }))
    .filter((op) => Object.keys(op.samples).length);
  const fallback = 'curl';
  const own = protocolsOf(doc).canonical.answerType;
  for (const op of operations) {
    if (!(fallback in op.samples))
      throw new Error(`${op.id}: a ${protocol.label} sample in other languages but not ${fallback}`);
    const source = ops.find((o) => o.operationId.toLowerCase() === op.id)!;
    const count =
      (source.resultType && source.resultType !== own ? [] : (source.examples.result ?? [])).length +
      (source.examples.refusal ?? []).length;
    // The page finds an answer by the label its picker shows: two answers under one label would be one.
    if (Object.keys(op.answers).length !== count) throw new Error(`${op.id}: two answer examples share a summary`);
  }
  return {
    id: protocol.id,
    request: protocol.requestType,
    answer: protocol.answerType,
    fallback,
    caption: protocol.docs!.note,
    missing: `No {language} sample of the ${protocol.label} mode (the typed client speaks ${protocolsOf(doc).canonical.label}): the ${fallback} one below sends it.`,
    answerCaption: `The answer in the ${protocol.label} mode (${protocol.answerType}), as the example picked above.`,
    operations,
  };
}

export function sampleModesData(doc: Doc, ops: Operation[]): SampleModesData {
  const protocols = protocolsOf(doc);
  return {
    modes: protocols.all.filter((p) => p !== protocols.canonical).map((p) => sampleMode(p, doc, ops)),
  };
}

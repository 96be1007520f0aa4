// The samples in PHP, Python, Ruby and C# of every operation, each rendered from the operation's one
// description (plan.ts) by its language's renderer, and the programs that check each renderer's hash
// code against generated/hash-vectors.json. The docs embed these sources as they are; the test
// test/docs/samples-languages.test.ts runs exactly them.
import { legacyRecipe } from '../../../runtime/signing.ts';
import type { Doc, Operation } from '../../lib/contract.ts';
import { recipesOf } from '../hash-recipes.ts';
import { csharpSample, csharpVectors } from './csharp.ts';
import { phpSample, phpVectors } from './php.ts';
import { hashCode, samplePlan, type Body, type SamplePlan } from './plan.ts';
import { pythonSample, pythonVectors } from './python.ts';
import { rubySample, rubyVectors } from './ruby.ts';
import { stepComment, type VectorCase } from './syntax.ts';

export type SampleLanguage = 'php' | 'python' | 'ruby' | 'csharp';

interface Renderer {
  /** The x-codeSamples lang (Redocly's highlighting) and label. */
  lang: string;
  label: string;
  sample(plan: SamplePlan): string;
  vectors(cases: VectorCase[]): string;
}

export const renderers: Record<SampleLanguage, Renderer> = {
  php: { lang: 'PHP', label: 'PHP', sample: phpSample, vectors: phpVectors },
  python: { lang: 'Python', label: 'Python', sample: pythonSample, vectors: pythonVectors },
  ruby: { lang: 'Ruby', label: 'Ruby', sample: rubySample, vectors: rubyVectors },
  csharp: { lang: 'C#', label: 'C#', sample: csharpSample, vectors: csharpVectors },
};

export const SAMPLE_LANGUAGES = Object.keys(renderers) as SampleLanguage[];

/** An operation's sample in each language, as the docs show it (none for a webhook). */
export function languageSamples(
  op: Operation,
  doc: Doc,
  plan = samplePlan(op, doc),
): { language: SampleLanguage; lang: string; label: string; source: string }[] {
  if (!plan) return [];
  return SAMPLE_LANGUAGES.map((language) => {
    const { lang, label, sample } = renderers[language];
    return { language, lang, label, source: sample(plan) };
  });
}

/**
 * The steps an operation's sample sends first, one comment line each, for the samples that only
 * show the call (curl, the typed client): the other languages' samples send them.
 */
export function stepLines(op: Operation, doc: Doc, plan = samplePlan(op, doc)): string[] {
  if (!plan?.steps.length) return [];
  return [
    ...plan.steps.map((_, i) => stepComment(plan, i)),
    "This call sends the example's values; on a fresh account, use those the steps answer (the PHP, Python, Ruby and C# samples send the steps).",
  ];
}

export interface HashVector {
  recipe: string;
  form: 'current' | 'legacy';
  passphrase: string;
  inputs: Body;
  preimage: string;
  hash: string;
}

/** A program in the language printing each vector's preimage and hash (tab-separated), one line each, by the document's recipes. */
export function vectorProgram(language: SampleLanguage, vectors: readonly HashVector[], doc: Doc): string {
  const cases = vectors.map((v): VectorCase => {
    const current = recipesOf(doc)[v.recipe]!;
    const recipe = v.form === 'legacy' ? legacyRecipe(current)! : current;
    const code = hashCode(recipe, v.inputs);
    if (code.kind !== 'concat') throw new Error(`hash vector ${v.recipe}: not a concatenation recipe`);
    return { inputs: v.inputs, passphrase: v.passphrase, code };
  });
  return renderers[language].vectors(cases);
}

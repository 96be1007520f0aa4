// Each language's example computes its hashes by hand, as the public clients of that language do, in
// the form those clients sign with: ActiveMerchant (Ruby) and the Python client the older form
// without the inner md5, the PHP drivers the current one. Every hash and the string it is computed
// over must be what generated/hash-vectors.json (the spec's worked examples) says, for every
// recipe and form the example signs with.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';
import { interpreters, LANGUAGES, missing, runExample } from './interpreters.ts';

const vectorsText = readFileSync(path.join(ROOT, 'generated/hash-vectors.json'), 'utf8');
const vectors = JSON.parse(vectorsText).vectors as Array<{
  recipe: string;
  form: string;
  preimage: string;
  hash: string;
}>;

describe.each(LANGUAGES)('%s hashes', (language) => {
  const why = missing(language);
  it.skipIf(why)(`match the published vectors${why ? ` (skipped: ${why})` : ''}`, async () => {
    const computed = (await runExample(language, 'hash_vectors', [], { input: vectorsText })) as typeof vectors;
    expect(computed.map((c) => `${c.recipe} ${c.form}`).sort()).toEqual([...interpreters[language].signsWith].sort());
    for (const c of computed) {
      const published = vectors.find((v) => v.recipe === c.recipe && v.form === c.form)!;
      expect({ preimage: c.preimage, hash: c.hash }, `${c.recipe} ${c.form}`).toEqual({
        preimage: published.preimage,
        hash: published.hash,
      });
    }
  });
});

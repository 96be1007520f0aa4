// Checks the compatibility corpus itself (not the project against it): every file parses and names its
// client, ids are unique, every citation is exact, every entry is complete, credentials are placeholders
// except in hash vectors, every hash vector reproduces its expected value, and every reference to an
// earlier answer points at an entry that exists before it.
import { describe, expect, it } from 'vitest';
import {
  CITATION,
  HASH_RECIPES,
  OUTCOMES,
  hashOf,
  loadCorpus,
  loadCorpusFiles,
  loadHashVectors,
  placeholderRefs,
  xmlAnswerFields,
} from './corpus.ts';

const files = loadCorpusFiles();
const entries = loadCorpus();

describe('compatibility corpus', () => {
  it('has one parsable file per client, named by its key', () => {
    expect(files.length).toBeGreaterThanOrEqual(4);
    for (const f of files) {
      expect(f.file, f.file).toBe(`${f.client.key}.json`);
      expect(f.client.repo, f.file).toMatch(/^[\w.-]+\/[\w.-]+$/);
      expect(f.client.commit, f.file).toMatch(/^[0-9a-f]{40}$/);
      expect(f.client.language, f.file).not.toBe('');
      expect(f.client.what, f.file).not.toBe('');
      expect(['current', 'legacy'], f.file).toContain(f.client.hashForm);
      expect(Array.isArray(f.entries) && Array.isArray(f.hashVectors) && Array.isArray(f.facts), f.file).toBe(true);
    }
  });

  it('covers the four clients of the reference file', () => {
    const repos = new Map(files.map((f) => [f.client.repo, f.client.commit]));
    expect(repos.get('activemerchant/active_merchant')).toBe('ca45b1b063ce2e1495e1427e0a1d42dcb482d57d');
    expect(repos.get('merchantwarrior/magento2')).toBe('9cb15aaf68505aa0a70cc2cdbea8ea28241413be');
    expect(repos.get('Xiippy/Xiippy.MerchantWarriorSDKsFor.NET')).toBe('18eb5970a1cab6c1820739b4cf98be88bdd7e386');
    expect(repos.get('digistorm/omnipay-merchant-warrior')).toBe('adb9d250dbed3ec326275c7043ca4103726bba15');
  });

  it('gives every entry and hash vector a unique kebab-case id', () => {
    const ids = [...entries.map((e) => e.id), ...files.flatMap((f) => f.hashVectors.map((v) => v.id))];
    for (const id of ids) expect(id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it("cites every entry, vector and fact exactly, in its own client's repository", () => {
    for (const f of files) {
      const cited = [...f.entries, ...f.hashVectors, ...f.facts].map((x) => x.citation);
      for (const citation of cited) {
        expect(citation, f.file).toMatch(CITATION);
        expect(citation.split('@')[0], citation).toBe(f.client.repo);
      }
    }
  });

  it('gives every entry its kind, operation, path, form, notes and a flat body', () => {
    for (const e of entries) {
      expect(['request', 'answer'], e.id).toContain(e.kind);
      expect(e.operation, e.id).toMatch(/^[A-Za-z][\w]*$/);
      expect(e.path, e.id).toMatch(/^\//);
      expect(e.form, e.id).not.toBe('');
      expect(e.notes, e.id).not.toBe('');
      expect(typeof e.body === 'object' && e.body !== null && !Array.isArray(e.body), e.id).toBe(true);
      expect(Object.keys(e.body).length, e.id).toBeGreaterThan(0);
      for (const [field, value] of Object.entries(e.body)) {
        // JSON mode: string values, [] for an empty custom field, and the one nested object a client sends (options).
        const ok =
          typeof value === 'string' ||
          (Array.isArray(value) && value.length === 0) ||
          (field === 'options' && typeof value === 'object');
        expect(ok, `${e.id}.${field}`).toBe(true);
      }
      if (e.expect) {
        if (e.expect.outcome !== undefined) expect(OUTCOMES, e.id).toContain(e.expect.outcome);
        if (e.expect.responseCode !== undefined) expect(Number.isInteger(e.expect.responseCode), e.id).toBe(true);
        for (const field of e.expect.present ?? []) expect(field, e.id).toMatch(/^[A-Za-z]\w*$/);
        for (const ref of Object.values(e.expect.differsFrom ?? {}))
          expect(placeholderRefs({ ref })[0]?.entry, `${e.id}: ${ref}`).toBeDefined();
      }
      // An answer says the mode it was given in; a request, the mode its client posts in (form when unsaid).
      if (e.kind === 'answer') expect(['form', 'json'], e.id).toContain(e.wire);
    }
  });

  it('asks every request for its method, in the body or in the path', () => {
    for (const e of entries.filter((x) => x.kind === 'request')) {
      const method = e.body.method;
      if (method !== undefined) expect(method, e.id).toBe(e.operation);
      else
        expect(
          e.path.endsWith(`/${e.operation}`),
          `${e.id}: no method field, so the path must name ${e.operation}`,
        ).toBe(true);
    }
  });

  it('keeps credentials as placeholders except in hash vectors', () => {
    for (const e of entries.filter((x) => x.kind === 'request' && !x.hashVector)) {
      if ('merchantUUID' in e.body) expect(e.body.merchantUUID, e.id).toBe('<MERCHANT_UUID>');
      if ('partnerUUID' in e.body) expect(e.body.partnerUUID, e.id).toBe('<PARTNER_UUID>');
      if ('apiKey' in e.body) expect(e.body.apiKey, e.id).toBe('<API_KEY>');
      if ('hash' in e.body) expect(['<HASH>', ''], e.id).toContain(e.body.hash);
    }
  });

  it("writes headers and wallet fields in the seed's names", () => {
    for (const e of entries) {
      for (const header of Object.keys(e.headers ?? {})) expect(header, e.id).not.toMatch(/^MW-/i);
      for (const field of Object.keys(e.body)) expect(field, e.id).not.toMatch(/applepay|googlepay/i);
    }
  });

  it('reproduces every hash vector from its recipe', () => {
    const vectors = loadHashVectors();
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) {
      expect(HASH_RECIPES, v.id).toContain(v.recipe);
      expect(v.expected, v.id).toMatch(/^[0-9a-f]{32}$/);
      expect(hashOf(v), v.id).toBe(v.expected);
    }
    // A vector's body, when shown, carries the vector's hash.
    for (const f of files) for (const v of f.hashVectors) if (v.body) expect(v.body.hash, v.id).toBe(v.expected);
    for (const e of entries) if (e.hashVector) expect(e.body.hash, e.id).toBe(e.hashVector.expected);
  });

  it('refers only to answers of earlier entries of the same client', () => {
    for (const f of files) {
      const seen = new Set<string>();
      for (const e of f.entries) {
        for (const ref of [...placeholderRefs(e.body), ...placeholderRefs(e.expect?.differsFrom ?? {})])
          if (ref.entry) expect(seen.has(ref.entry), `${e.id}.${ref.field} -> ${ref.entry}`).toBe(true);
        seen.add(e.id);
      }
    }
  });

  it('holds recorded wire bodies: XML answers whose elements are their body, form requests whose fields are theirs', () => {
    const recorded = entries.filter((e) => e.wireBody !== undefined);
    expect(recorded.filter((e) => e.kind === 'answer').length).toBeGreaterThan(0);
    expect(recorded.filter((e) => e.kind === 'request').length).toBeGreaterThan(0);
    for (const entry of recorded) {
      if (entry.kind === 'answer') {
        expect(xmlAnswerFields(entry.wireBody!), entry.id).toEqual(entry.body);
        continue;
      }
      const sent = [...new URLSearchParams(entry.wireBody)];
      // The same names in the same order, and the same values but for the credentials and the hash,
      // which the corpus writes as placeholders (the client's own account is in the transcript).
      expect(
        sent.map(([name]) => name),
        entry.id,
      ).toEqual(Object.keys(entry.body));
      for (const [name, value] of sent) {
        const converted = entry.body[name];
        if (typeof converted === 'string' && converted.startsWith('<')) continue;
        expect(value, `${entry.id}.${name}`).toBe(converted);
      }
    }
  });
});

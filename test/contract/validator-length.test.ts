// The generated validators count a string's length in code points (JSON Schema: a pair of UTF-16
// surrogates is one character), as Ajv's runtime helper ucs2length does: one step a character. The
// contract suite's broken batchFile (4 MiB of base64 and one character more) was counted character by
// character, by the suite's own expectation and again by the server, four times a run, about 60 ms
// each. A string without a high surrogate has as many code points as UTF-16 units: its length is read
// at once, and only a string that holds one is counted by the helper.
import { createRequire } from 'node:module';
import { afterEach, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const helper = require('ajv/dist/runtime/ucs2length') as { default: (text: string) => number };
const original = helper.default;
const module = require.resolve('../../generated/validators/requests/ProcessBatchRequest.cjs');
afterEach(() => {
  helper.default = original;
  delete require.cache[module];
});

/** ProcessBatchRequest's validator, loaded afresh while the helper counts its calls. */
function counted(): { validate: (v: unknown) => boolean; errors: () => any[]; calls: () => number } {
  let calls = 0;
  helper.default = (text: string) => {
    calls++;
    return original(text);
  };
  delete require.cache[module];
  const validate = require(module).ProcessBatchRequest;
  return { validate, errors: () => validate.errors ?? [], calls: () => calls };
}

const MAX = 4 * 1024 * 1024;
const batchFileTooLong = (errors: any[]) =>
  errors.some((e) => e.instancePath === '/batchFile' && e.keyword === 'maxLength');

it('refuses a batchFile one character past maxLength without counting it character by character', () => {
  const v = counted();
  v.validate({ method: 'processBatch', batchFile: 'x'.repeat(MAX + 1) });
  expect(batchFileTooLong(v.errors())).toBe(true);
  expect(v.calls(), 'calls of ucs2length for strings without a surrogate').toBe(0);
  v.validate({ method: 'processBatch', batchFile: 'x'.repeat(MAX) });
  expect(batchFileTooLong(v.errors())).toBe(false);
});

it('still counts a pair of surrogates as one character', () => {
  const v = counted();
  // 3 Mi code points in 6 Mi UTF-16 units: within maxLength.
  v.validate({ method: 'processBatch', batchFile: '😀'.repeat(3 * 1024 * 1024) });
  expect(batchFileTooLong(v.errors())).toBe(false);
  // One pair and MAX letters: one code point past it.
  v.validate({ method: 'processBatch', batchFile: `😀${'x'.repeat(MAX)}` });
  expect(batchFileTooLong(v.errors())).toBe(true);
  // A lone high surrogate is a character of its own, as the helper counts it.
  v.validate({ method: 'processBatch', batchFile: `\uD800${'x'.repeat(MAX - 1)}` });
  expect(batchFileTooLong(v.errors())).toBe(false);
  v.validate({ method: 'processBatch', batchFile: `\uD800${'x'.repeat(MAX)}` });
  expect(batchFileTooLong(v.errors())).toBe(true);
});

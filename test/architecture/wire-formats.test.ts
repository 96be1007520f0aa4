// No file outside the protocol modules (runtime/protocols/) names a wire format: its media types, its
// XML root, the names its module exports (wire-format-checks.ts). The core, the mock's front, the
// contract suite, the generators and the tools take a format from the protocols, by what it does.
import { describe, expect, it } from 'vitest';
import { listedButClean, namingProblems, wireFormatMarks } from './wire-format-checks.ts';

describe('wire formats at the edge', () => {
  it('knows every format the spec declares, by its media types and its module', () => {
    const marks = wireFormatMarks().map((m) => `${m.protocol} ${m.text}`);
    expect(marks).toEqual(
      expect.arrayContaining([
        'json application/json',
        'json parseJson',
        'form application/x-www-form-urlencoded',
        'form application/xml',
        'form mwResponse',
        'form readForm',
        'form writeXml',
      ]),
    );
  });

  it('no file outside runtime/protocols/ names one', () => {
    expect(namingProblems()).toEqual([]);
  });

  it('sees a file that does (the check can fail)', () => {
    const marks = [{ protocol: 'form', text: 'createGateway', word: true }];
    expect(namingProblems(marks).some((p) => p.startsWith('server-stubs/index.ts:'))).toBe(true);
  });

  it('lists as serving another JSON interface only files that still name JSON (the list only shrinks)', () => {
    expect(listedButClean()).toEqual([]);
  });
});

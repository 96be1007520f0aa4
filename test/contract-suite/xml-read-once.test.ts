// The suite reads a form request's XML answer as the operation's result, and a refusal (a negative
// responseCode) again as its refusal (contract/http.ts readAnswer): the text was checked well-formed
// and parsed twice, fast-xml-parser's validator and parser, the larger part of reading it. The same text
// read again is now checked and parsed once, and typed by each shape; another text is read afresh.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterEach, expect, it } from 'vitest';
import { readAnswer } from '../../contract/http.ts';
import { operations } from '../../generated/operations.ts';
import { protocols } from '../../generated/protocols.ts';

const xml = createRequire(import.meta.url)('fast-xml-parser') as typeof import('fast-xml-parser');
const validate = xml.XMLValidator.validate;
afterEach(() => {
  xml.XMLValidator.validate = validate;
});

/**
 * refundCard's refusals written in the form protocol's XML, and a count of the well-formedness checks
 * made from now on. The texts are this test's own (a mark of its own in each): a worker runs file
 * after file in one process (vitest.config.ts, isolate false), and a refusal another file's run read
 * lately would be read from what that run parsed.
 */
function refusalsCounted() {
  const op = operations.find((o) => o.operationId === 'refundCard')!;
  const form = protocols.all.find((p) => p.id === 'form')!;
  const counted = { checks: 0 };
  xml.XMLValidator.validate = (...args: Parameters<typeof validate>) => {
    counted.checks++;
    return validate(...args);
  };
  const mark = randomUUID();
  const refusal = (message: string) =>
    form.writeAnswer({ responseCode: -2, responseMessage: `${message} (${mark})` }, op.shapes.refusal);
  /** What the suite reads of a refusal with this message: /post's responseCode is text, in JSON as in XML. */
  const read = (message: string) => ({ ok: { responseCode: '-2', responseMessage: `${message} (${mark})` } });
  return { op, form, counted, refusal, read };
}

it('checks and parses a refusal in XML once, read as the result and then as the refusal', () => {
  const { op, form, counted, refusal, read } = refusalsCounted();
  const first = refusal("Field 'refundAmount' is invalid");
  expect(readAnswer(form, op, first)).toEqual(read("Field 'refundAmount' is invalid"));
  expect(counted.checks, 'well-formedness checks of one refusal').toBe(1);
  // Another text is read afresh.
  const second = refusal("Field 'transactionID' is invalid");
  expect(readAnswer(form, op, second)).toEqual(read("Field 'transactionID' is invalid"));
  expect(counted.checks).toBe(2);
  // A text that is not well-formed says so, read as either shape.
  const broken = first.replace('</responseMessage>', '');
  expect(readAnswer(form, op, broken)).toMatchObject({ error: expect.stringContaining('not well-formed') });
  expect(form.readAnswer(broken, op.shapes.refusal)).toMatchObject({
    error: expect.stringContaining('not well-formed'),
  });
});

it('checks and parses a refusal read again after other answers once, while it is among the texts read lately', () => {
  // A contract run against the sandbox read 818 XML answers and 231 different texts: the same
  // refusal comes back for check after check, with other answers read between. Read once each while
  // it is among the last 256 texts read; a text further back is read afresh, so what is kept is bounded.
  const { op, form, counted, refusal, read: expected } = refusalsCounted();
  const amount = refusal("Field 'refundAmount' is invalid");
  const id = refusal("Field 'transactionID' is invalid");
  expect(readAnswer(form, op, amount)).toEqual(expected("Field 'refundAmount' is invalid"));
  expect(readAnswer(form, op, id)).toEqual(expected("Field 'transactionID' is invalid"));
  expect(readAnswer(form, op, amount)).toEqual(expected("Field 'refundAmount' is invalid"));
  expect(readAnswer(form, op, id)).toEqual(expected("Field 'transactionID' is invalid"));
  expect(counted.checks, 'well-formedness checks of two refusals read twice each, in turn').toBe(2);
  // 256 other texts later, the first is read afresh, and read alike.
  for (let i = 0; i < 256; i++) readAnswer(form, op, refusal(`Field 'other${i}' is invalid`));
  counted.checks = 0;
  expect(readAnswer(form, op, amount)).toEqual(expected("Field 'refundAmount' is invalid"));
  expect(counted.checks, 'a text read 256 texts ago is checked again').toBe(1);
});

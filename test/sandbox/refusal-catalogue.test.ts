// The sandbox's refusals are worded in one place, sandbox/refusals.ts (on the stubs' message forms):
// a handler names an entry and passes what varies. Read with TypeScript's parser over every source
// file of sandbox/, this fails when a refusal is worded inline again: a string passed to a refusal
// helper, a literal in a message form ("Field 'x' is …"), or a negative responseCode written out.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

const CATALOGUE = 'sandbox/refusals.ts';
const STUBS_CATALOGUE = 'server-stubs/core/refusals.ts';
/** The helpers that turn a code and a message into a refusal (the stubs' and the sandbox's, old and new). */
const RAW = new Set(['refuse', 'refusal', 'nppRefusal', 'invalid', 'nppInvalid', 'numbered', 'fieldInvalid']);
const FORM = /^(Field|Header|Parameter) '|^The (request|body) /;

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

const textOf = (node: ts.Node) =>
  ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
    ? node.text
    : ts.isTemplateExpression(node)
      ? node.head.text
      : undefined;

/** Each place in the file that words a refusal itself. */
function inlineRefusals(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) =>
    found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${what}`);
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && RAW.has(node.expression.text)) {
      if (node.arguments.some((a) => textOf(a) !== undefined))
        at(node, `${node.expression.text}(…) with a written message`);
    } else if (textOf(node) !== undefined && FORM.test(textOf(node)!))
      at(node, `a message worded inline: ${textOf(node)}`);
    else if (ts.isPropertyAssignment(node) && node.name.getText(source) === 'responseCode') {
      const v = node.initializer;
      if (
        (ts.isPrefixUnaryExpression(v) && v.operator === ts.SyntaxKind.MinusToken) ||
        (ts.isStringLiteral(v) && v.text.startsWith('-'))
      )
        at(node, 'a refusal code written out');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the sandbox and the stubs word their refusals in one catalogue each', () => {
  it('no handler, guard or control code words a refusal inline', () => {
    const found = sources('sandbox')
      .filter((f) => f !== CATALOGUE)
      .flatMap((f) => inlineRefusals(f, readFileSync(path.join(ROOT, f), 'utf8')));
    expect(found).toEqual([]);
  });

  it("the validating stubs word theirs in their own catalogue (the sandbox's catalogue is built on its forms)", () => {
    const found = sources('server-stubs')
      .filter((f) => f !== STUBS_CATALOGUE)
      .flatMap((f) => inlineRefusals(f, readFileSync(path.join(ROOT, f), 'utf8')));
    expect(found).toEqual([]);
  });

  it('finds what it should: a written message, a message form, a written code', () => {
    const probe = [
      "const a = invalid('cardID', 'no such card');",
      "const b = nppRefusal(-2, `Field 'payId' is invalid: taken`);",
      "const c = { responseCode: '-2', responseMessage: m };",
      'const d = refused(refusals.noSuchCard());',
    ].join('\n');
    expect(inlineRefusals('probe.ts', probe).map((f) => f.replace(/^probe\.ts:(\d+) .*/, '$1'))).toEqual([
      '1',
      '2',
      '2',
      '3',
    ]);
  });
});

// The names a package entry's source exports as values (its `export { … }` lists, `export const`,
// `export function`), read from the file as written: a generator that names what an entry exports
// reads it here, not from a second list, and without importing the entry (whose modules import the
// generated files the generator is writing).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** The value names `file` (relative to `root`) exports; type-only exports are not among them. */
export function valueExports(root: string, file: string): Set<string> {
  const source = ts.createSourceFile(file, readFileSync(path.join(root, file), 'utf8'), ts.ScriptTarget.Latest);
  const names = new Set<string>();
  const exported = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const s of source.statements) {
    if (ts.isExportDeclaration(s) && !s.isTypeOnly && s.exportClause && ts.isNamedExports(s.exportClause)) {
      for (const e of s.exportClause.elements) if (!e.isTypeOnly) names.add(e.name.text);
    } else if (ts.isVariableStatement(s) && exported(s)) {
      for (const d of s.declarationList.declarations) if (ts.isIdentifier(d.name)) names.add(d.name.text);
    } else if ((ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s)) && exported(s) && s.name) {
      names.add(s.name.text);
    }
  }
  return names;
}

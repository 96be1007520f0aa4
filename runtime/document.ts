// Reading the bundled document: JSON pointers, $refs, and examples by name wherever the document
// keeps them (components for the shared paths' methods, inline for the other operations).
export type Doc = Record<string, any>;

export function resolvePointer(doc: Doc, pointer: string): any {
  if (!pointer.startsWith('#/')) throw new Error(`Not a local pointer: ${pointer}`);
  return pointer
    .slice(2)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node: any, key) => (node === undefined ? undefined : node[key]), doc);
}

export function deref(doc: Doc, node: any): any {
  return node && typeof node.$ref === 'string' ? deref(doc, resolvePointer(doc, node.$ref)) : node;
}

/** The example objects of an operation, by name, wherever the document keeps them. */
export function exampleValue(doc: Doc, name: string): unknown {
  const example = doc.components?.examples?.[name];
  if (example) return example.value;
  // Examples written inline (standalone operations) are not moved to components by the bundler.
  let found: unknown;
  const visit = (node: any): void => {
    if (found !== undefined || !node || typeof node !== 'object') return;
    if (node.examples && typeof node.examples === 'object' && node.examples[name]) {
      found = deref(doc, node.examples[name]).value;
      return;
    }
    for (const v of Object.values(node)) visit(v);
  };
  visit({ paths: doc.paths, webhooks: doc.webhooks, responses: doc.components?.responses });
  return found;
}

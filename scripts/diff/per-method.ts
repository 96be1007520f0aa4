// The document as its clients read it, one operation per method. A shared path (/post, /token…) is
// one OpenAPI operation whose request is a oneOf of every method's request and whose success is an
// anyOf of every method's result: lists derived from the methods, which a client of one method never
// reads. Diffed as they stand, a method added to the path reads as an alternative added to every
// other method's result ("major, breaking clients"), and a reordered list as a change. So before the
// schema diff each method becomes an operation of its own (a path `<path>/method=<name>`), holding
// its own branch of every combined list, per content entry whatever the media type; the combined
// lists themselves are not compared. Methods added, removed or moved are contract-changes.ts's job.
import type { Doc, DocNode } from '../lib/contract.ts';

const VERBS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The path a method of a shared path is diffed under. */
export const methodPath = (path: string, method: string) => `${path}/method=${method}`;

const pick = (examples: DocNode | undefined, names: string[]) =>
  examples && Object.fromEntries(Object.entries(examples).filter(([name]) => names.includes(name)));

function requestContent(content: DocNode, method: string, request: string | undefined, names: string[]): DocNode {
  const out: DocNode = {};
  for (const [type, entry] of Object.entries<DocNode>(content)) {
    const schema = entry.schema;
    // The method's branch of the composed union: its descriptor's request (a path whose methods take
    // several forms has no discriminator), else the mapping of a document written before descriptors named it.
    const composed = schema?.oneOf || schema?.discriminator;
    const branch = composed ? (request ?? schema?.discriminator?.mapping?.[method]) : undefined;
    out[type] = {
      ...entry,
      ...(branch && { schema: { $ref: branch } }),
      ...(entry.examples && { examples: pick(entry.examples, names) }),
    };
  }
  return out;
}

function responseContent(content: DocNode, own: Set<string>, claimed: Set<string>, mine: string | undefined): DocNode {
  const out: DocNode = {};
  for (const [type, entry] of Object.entries<DocNode>(content)) {
    const schema = entry.schema;
    const list = schema?.anyOf ? 'anyOf' : schema?.oneOf ? 'oneOf' : undefined;
    // A media type another method answers alone (getSettlement's zip) is not this method's.
    if (!list && claimed.has(type) && type !== mine) continue;
    out[type] = {
      ...entry,
      ...(list && { schema: { ...schema, [list]: schema[list].filter((s: DocNode) => own.has(s.$ref)) } }),
    };
  }
  return out;
}

function methodOperation(op: DocNode, name: string, d: DocNode, resultTypes: Set<string>): DocNode {
  const { 'x-methods': _, ...rest } = op;
  const examples = [...(d.examples?.request ?? [])];
  const answers = [...(d.examples?.result ?? []), ...(d.examples?.refusal ?? [])];
  const own = new Set([d.result, d.refusal]);
  // A file result's media type; undefined for a structured answer (the spec's own media type).
  const mine: string | undefined = d.resultType;
  const responses: DocNode = {};
  for (const [status, response] of Object.entries<DocNode>(op.responses ?? {})) {
    responses[status] = response.content
      ? {
          ...response,
          content: Object.fromEntries(
            Object.entries<DocNode>(responseContent(response.content, own, resultTypes, mine)).map(([t, e]) => [
              t,
              e.examples ? { ...e, examples: pick(e.examples, answers) } : e,
            ]),
          ),
        }
      : response;
  }
  return {
    ...rest,
    operationId: d.operationId,
    summary: d.summary ?? rest.summary,
    ...(d.deprecated !== undefined && { deprecated: d.deprecated }),
    ...(op.requestBody?.content && {
      requestBody: { ...op.requestBody, content: requestContent(op.requestBody.content, name, d.request, examples) },
    }),
    responses,
  };
}

/** A copy of the document with every shared path's methods as operations of their own. */
export function perMethod(doc: Doc): Doc {
  const paths: DocNode = {};
  for (const [path, item] of Object.entries<DocNode>(doc.paths ?? {})) {
    const shared = VERBS.filter((verb) => item[verb]?.['x-methods']);
    if (!shared.length) {
      paths[path] = item;
      continue;
    }
    const others = Object.fromEntries(Object.entries(item).filter(([key]) => !shared.includes(key)));
    if (Object.keys(others).some((key) => VERBS.includes(key))) paths[path] = others;
    for (const verb of shared) {
      const methods = Object.entries<DocNode>(item[verb]['x-methods']);
      const resultTypes = new Set(methods.map(([, d]) => d.resultType).filter(Boolean) as string[]);
      for (const [name, d] of methods)
        paths[methodPath(path, name)] = { ...others, [verb]: methodOperation(item[verb], name, d, resultTypes) };
    }
  }
  return { ...doc, paths } as Doc;
}

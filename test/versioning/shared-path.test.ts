// The gate reasons per method, as a client does: on a shared path (/post, /token…) a client of one
// method never reads another method's branch of the path's combined lists (the request oneOf and its
// mapping, the result anyOf, the example maps). A method added, removed or answering another result
// is a change of that method only, and reordering the combined lists is no change at all.
import { beforeAll, describe, expect, it } from 'vitest';
import { diffDocs, workingTree, type DiffReport } from '../../scripts/diff/index.ts';
import type { Doc, DocNode } from '../../scripts/lib/contract.ts';

let base: Doc;
const SCHEMAS = '#/components/schemas/';

const diff = (change: (doc: DocNode) => void): Promise<DiffReport> => {
  const revision: DocNode = structuredClone(base);
  change(revision);
  return diffDocs({ label: 'base', doc: base, version: '0.2.0' }, { label: 'revision', doc: revision as Doc });
};
/** The changes a client or a server meets (prose and examples left out). */
const onTheWire = (report: DiffReport) => report.changes.filter((c) => c.kind !== 'documentation');
const summary = (report: DiffReport) => onTheWire(report).map((c) => `${c.bump} ${c.kind} ${c.operations.join(',')}`);

/** Every combined list of a shared path's operation, whatever the media type. */
function combinedLists(op: DocNode): { list: DocNode[]; examples: DocNode[] } {
  const lists: DocNode[] = [];
  const examples: DocNode[] = [];
  for (const content of [op.requestBody?.content, op.responses?.['200']?.content])
    for (const entry of Object.values<DocNode>(content ?? {})) {
      if (entry.schema?.oneOf) lists.push(entry.schema.oneOf);
      if (entry.schema?.anyOf) lists.push(entry.schema.anyOf);
      if (entry.examples) examples.push(entry);
    }
  return { list: lists, examples };
}

beforeAll(async () => {
  base = (await workingTree()).doc;
});

describe('the gate on a shared path, per method', () => {
  it('a new method with a result of its own is "method added" for that method only', async () => {
    const report = await diff((doc) => {
      const post = doc.paths['/post'].post;
      doc.components.schemas.QueryRefundRequest = {
        type: 'object',
        required: ['method', 'transactionID'],
        additionalProperties: false,
        properties: { method: { type: 'string', const: 'queryRefund' }, transactionID: { type: 'string' } },
      };
      doc.components.schemas.RefundStatusResult = {
        type: 'object',
        required: ['responseCode', 'responseMessage', 'refundStatus'],
        properties: {
          responseCode: { type: 'string' },
          responseMessage: { type: 'string' },
          refundStatus: { type: 'string' },
        },
      };
      post['x-methods'].queryRefund = {
        operationId: 'queryRefund',
        summary: 'Query a refund',
        request: `${SCHEMAS}QueryRefundRequest`,
        result: `${SCHEMAS}RefundStatusResult`,
        refusal: `${SCHEMAS}Refusal`,
        credentials: ['merchant'],
        hashes: [{ name: 'hash', recipe: 'query' }],
        examples: { request: ['queryRefund'], result: ['queryRefundApproved'], refusal: [] },
      };
      const body = post.requestBody.content['application/json'];
      body.schema.oneOf.push({ $ref: `${SCHEMAS}QueryRefundRequest` });
      // /post has no discriminator (processCard and processAuth take several forms): the const tells.
      if (body.schema.discriminator) body.schema.discriminator.mapping.queryRefund = `${SCHEMAS}QueryRefundRequest`;
      body.examples.queryRefund = { value: { method: 'queryRefund', transactionID: 'x' } };
      const result = post.responses['200'].content['application/json'];
      result.schema.anyOf.splice(-1, 0, { $ref: `${SCHEMAS}RefundStatusResult` });
      result.examples.queryRefundApproved = {
        value: { responseCode: '0', responseMessage: 'ok', refundStatus: 'done' },
      };
    });
    expect(summary(report)).toEqual(['minor method-added queryRefund']);
    expect(report.bump).toBe('minor');
  });

  it('a removed method breaks the clients of that method only', async () => {
    const report = await diff((doc) => {
      const post = doc.paths['/post'].post;
      delete post['x-methods'].getSurcharge;
      const body = post.requestBody.content['application/json'];
      body.schema.oneOf = body.schema.oneOf.filter((r: DocNode) => r.$ref !== `${SCHEMAS}GetSurchargeRequest`);
      delete body.schema.discriminator?.mapping.getSurcharge;
      const result = post.responses['200'].content['application/json'];
      // SurchargeResult was getSurcharge's alone on /post: it leaves the combined list with it.
      result.schema.anyOf = result.schema.anyOf.filter((r: DocNode) => r.$ref !== `${SCHEMAS}SurchargeResult`);
      for (const examples of [body.examples, result.examples])
        for (const name of Object.keys(examples)) if (name.startsWith('getSurcharge')) delete examples[name];
    });
    expect(summary(report)).toEqual(['major method-removed getSurcharge']);
  });

  it("one method answering a new result changes that method's result, not the path's other methods", async () => {
    const report = await diff((doc) => {
      const post = doc.paths['/post'].post;
      doc.components.schemas.RefundResult = structuredClone(doc.components.schemas.TransactionResult);
      post['x-methods'].refundCard.result = `${SCHEMAS}RefundResult`;
      post.responses['200'].content['application/json'].schema.anyOf.unshift({ $ref: `${SCHEMAS}RefundResult` });
    });
    expect(summary(report)).toEqual(['major result-schema-changed refundCard']);
  });

  it('a renamed method is the old name removed and the new one added, nothing else', async () => {
    const report = await diff((doc) => {
      const post = doc.paths['/post'].post;
      const { queryBIN, ...others } = post['x-methods'];
      post['x-methods'] = { ...others, lookupBIN: { ...queryBIN, operationId: 'lookupBIN' } };
      const body = post.requestBody.content['application/json'];
      if (body.schema.discriminator) {
        delete body.schema.discriminator.mapping.queryBIN;
        body.schema.discriminator.mapping.lookupBIN = `${SCHEMAS}QueryBINRequest`;
      }
      doc.components.schemas.QueryBINRequest.properties.method.const = 'lookupBIN';
      body.examples.lookupBIN = body.examples.queryBIN;
      delete body.examples.queryBIN;
    });
    expect(summary(report).sort()).toEqual(['major method-removed queryBIN', 'minor method-added lookupBIN']);
  });

  it('the combined lists reordered (x-methods, oneOf, anyOf, mapping, example maps) are no change', async () => {
    const report = await diff((doc) => {
      for (const item of Object.values<DocNode>(doc.paths)) {
        const op = item.post;
        if (!op?.['x-methods']) continue;
        op['x-methods'] = Object.fromEntries(Object.entries(op['x-methods']).reverse());
        const { list, examples } = combinedLists(op);
        for (const l of list) l.reverse();
        for (const entry of examples) entry.examples = Object.fromEntries(Object.entries(entry.examples).reverse());
        const mapping = op.requestBody.content['application/json'].schema.discriminator?.mapping;
        if (mapping)
          op.requestBody.content['application/json'].schema.discriminator.mapping = Object.fromEntries(
            Object.entries(mapping).reverse(),
          );
      }
    });
    expect(report.changes).toEqual([]);
  });
});

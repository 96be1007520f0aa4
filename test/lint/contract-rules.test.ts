// The contract's own lint rules (lint/index.js, a Redocly plugin) on a copy of the spec broken in
// each way they must catch. The real spec passing them is test/contract/document.test.ts's lint run;
// here each rule must find what was broken, where it was broken, and nothing in the NPP amounts.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
let dir: string;
let problems: { ruleId: string; message: string; location: { source: { ref: string }; pointer: string }[] }[];

async function edit(file: string, change: (doc: any) => void): Promise<void> {
  const full = path.join(dir, 'spec', file);
  const doc = YAML.parse(await readFile(full, 'utf8'));
  change(doc);
  await writeFile(full, YAML.stringify(doc));
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-lint-'));
  // npm run lint:spec's script and what it imports: it composes the shared paths' lists as it reads.
  // Not the tools' own install under scripts/ (scripts/tools/node_modules, some 70,000 files): the lint
  // imports none of it, and copying it was most of this file's time.
  for (const item of ['spec', 'lint', 'redocly.yaml', 'scripts', 'runtime', 'releases'])
    await cp(path.join(ROOT, item), path.join(dir, item), {
      recursive: true,
      filter: (source) => path.basename(source) !== 'node_modules',
    });
  // The plugin imports yaml as the project does.
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  // no-card-data-out: a result with the full card number, a webhook with a CSC, an answer example with a PAN.
  await edit(
    'components/schemas/results.yaml',
    (d) => (d.TransactionResult.properties.paymentCardNumber = { $ref: 'fields.yaml#/CardNumber' }),
  );
  await edit(
    'components/schemas/notifications.yaml',
    (d) => (d.DirectDebitOutcomeNotification.properties.paymentCardCSC = { type: 'string' }),
  );
  await edit(
    'methods/post/processCard.yaml',
    (d) => (d.examples.processCardApproved.value.receiptNo = '4564710000000004'),
  );
  // card-amount-format: a capture amount as a number.
  await edit(
    'methods/post/processCapture.yaml',
    (d) => (d.ProcessCaptureRequest.properties.captureAmount = { type: 'number' }),
  );
  // examples-per-outcome: processCapture without its refusal example; refundCard naming one that is not there.
  await edit('methods/post/processCapture.yaml', (d) => delete d['x-method'].examples.refusal);
  await edit('methods/post/refundCard.yaml', (d) => (d['x-method'].examples.result = ['refundCardNowhere']));
  // inferred-has-reason: an inferred mark without its reason, a defined recipe without one.
  await edit('components/schemas/fields.yaml', (d) => (d.Flag['x-inferred'] = true));
  await edit('hash-recipes.yaml', (d) => delete d.blacklist.inferred);
  // rule-in-prose: the payout time zone said in prose with its mark removed; a sum said in prose with none.
  await edit('components/schemas/payout.yaml', (d) => delete d.PayoutTimestamp['x-time']);
  await edit(
    'components/schemas/results.yaml',
    (d) => (d.SurchargeResult.properties.surchargeAmount.description = 'The sum of the fees.'),
  );
  // array-items: the empty-array branch of settlementDate without its items.
  await edit('components/schemas/results.yaml', (d) => delete d.DDebitResult.properties.settlementDate.oneOf[1].items);
  // size-for-tools: a batch file of 10 MiB.
  await edit(
    'methods/post/processBatch.yaml',
    (d) => (d.ProcessBatchRequest.properties.batchFile.maxLength = 10485760),
  );
  // discriminator-maps-objects: a discriminator mapping a value to a union.
  await edit(
    'components/schemas/fields.yaml',
    (d) => (d.CustomEcho.discriminator = { propertyName: 'kind', mapping: { echo: '#/CustomEcho' } }),
  );
  // examples-paired: the pairing switched off (x-example-pairs), so no first request example is paired.
  await edit('openapi.yaml', (d) => delete d['x-example-pairs']);
  const run = await promisify(execFile)(process.execPath, [path.join(dir, 'scripts/lint-spec.ts'), '--format=json'], {
    cwd: dir,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off' },
    maxBuffer: 64 << 20,
  }).catch((error) => error);
  problems = JSON.parse(run.stdout).problems;
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const of = (rule: string) => problems.filter((p) => p.ruleId === `contract/${rule}`);
// Redocly gives each source relative to the folder it ran in.
const at = (p: (typeof problems)[number]) =>
  `${path.relative(path.join(dir, 'spec'), path.resolve(dir, p.location[0]!.source.ref))}${p.location[0]!.pointer}`;

describe('lint: the contract rules catch what they are for', () => {
  it('no-card-data-out: an unmasked card number in a result, a CSC in a webhook, a PAN in an answer example', () => {
    const found = of('no-card-data-out').map(at);
    expect(found).toContain('components/schemas/results.yaml#/TransactionResult/properties/paymentCardNumber');
    expect(found).toContain(
      'components/schemas/notifications.yaml#/DirectDebitOutcomeNotification/properties/paymentCardCSC',
    );
    expect(found.some((f) => f.startsWith('methods/post/processCard.yaml#/examples/processCardApproved'))).toBe(true);
    // Requests carry full card numbers and CSCs by design: none is reported.
    expect(found.filter((f) => f.includes('Request'))).toEqual([]);
  });
  it('card-amount-format: a card amount that is not the amount format, and no NPP amount', () => {
    const found = of('card-amount-format').map(at);
    expect(found).toEqual(['methods/post/processCapture.yaml#/ProcessCaptureRequest/properties/captureAmount']);
  });
  it('examples-per-outcome: a missing refusal example, a success example that does not exist', () => {
    const messages = of('examples-per-outcome').map((p) => p.message);
    expect(messages).toContain('processCapture names no refusal example (examples.refusal).');
    expect(messages.some((m) => m.includes('refundCardNowhere'))).toBe(true);
    expect(messages).toHaveLength(2);
  });
  it('rule-in-prose: a zone said in a description with no x-time, a sum with no x-sum, and nothing else', () => {
    const found = of('rule-in-prose').map(at).sort();
    expect(found).toEqual([
      'components/schemas/payout.yaml#/PayoutTimestamp/description',
      'components/schemas/results.yaml#/SurchargeResult/properties/surchargeAmount/description',
    ]);
    expect(of('rule-in-prose').map((p) => p.message)).toContainEqual(
      expect.stringMatching(/time zone \("Eastern time"\).*x-time/),
    );
  });
  it('inferred-has-reason: x-inferred: true, and a defined recipe without its reason', () => {
    const found = of('inferred-has-reason').map(at);
    expect(found).toContain('components/schemas/fields.yaml#/Flag/x-inferred');
    expect(found).toContain('hash-recipes.yaml#/blacklist');
  });
  it('array-items: the array branch without items, and nothing else', () => {
    expect(of('array-items').map(at)).toEqual([
      'components/schemas/results.yaml#/DDebitResult/properties/settlementDate/oneOf/1',
    ]);
  });
  it('size-for-tools: a 10 MiB batch file, and nothing else', () => {
    expect(of('size-for-tools').map(at)).toEqual([
      'methods/post/processBatch.yaml#/ProcessBatchRequest/properties/batchFile/maxLength',
    ]);
  });
  it('discriminator-maps-objects: a value mapped to a union; the shared paths whose methods have several forms carry none', () => {
    expect(of('discriminator-maps-objects').map(at)).toEqual([
      'components/schemas/fields.yaml#/CustomEcho/discriminator/mapping/echo',
    ]);
  });
  it("examples-paired: without x-example-pairs, every operation's first request example is unpaired", () => {
    const found = of('examples-paired').map(at);
    expect(found).toContain(
      'paths/npp/payto/agreement.yaml#/post/requestBody/content/application~1json/examples/createAgreement',
    );
    expect(found.filter((f) => f.startsWith('paths/post.yaml'))).not.toEqual([]);
    // A further request example (another form of the same method) is not held to it.
    // On /post processCardPayframe is processCard's second form: not held (on /payframe it is the first).
    expect(found.some((f) => f.startsWith('paths/post.yaml') && f.endsWith('/processCardPayframe'))).toBe(false);
    expect(found.some((f) => f.startsWith('paths/payframe.yaml') && f.endsWith('/processCardPayframe'))).toBe(true);
  });
});

// Which of the contract's rules the mock keeps and which need the sandbox, in words, from the spec
// (the published document, the operation table, the refusal and scenario catalogues) and from what
// the mock does with each kind of mark: docs/DEPLOY.md's block between `<!-- mock:rules -->` markers
// is what keptRules() writes now (test/mock/kept-rules.test.ts; `PGW_UPDATE_SAMPLES=1` rewrites it).
import { operations } from '../generated/operations.ts';
import { refusalCatalogue } from '../generated/refusal-catalogue.ts';
import { scenarios } from '../generated/scenarios.ts';
import { answerRulesOf } from '../runtime/answer-rules.ts';
import type { MockDocument } from './answers.ts';

/**
 * The spec's rule marks that need a store or a clock, and why: the mock serves their examples' values
 * as they stand. A mark the spec holds that is neither here nor kept (x-echo, x-sum) fails the test.
 */
export const NEEDS_STATE: Readonly<Record<string, string>> = {
  'x-time': "a timestamp made now, on the server's clock",
  'x-settlement-date': 'the business day a transaction made now settles on',
  'x-settlement-file': 'the rows a settlement file lists: the transactions stored',
  'x-status-progression': "a status that moves on: what is stored and the server's clock",
  'x-attempts': 'the attempts a payout has made: what is stored',
  'x-rollup': 'a status summing up stored items',
};
/** The sandbox's refusals of a rule that needs the request only, which the mock makes too (mock/front.ts). */
export const SANDBOX_REFUSALS_KEPT = ['cardNumberInField'] as const;
/** The marks the mock keeps (mock/answers.ts, through runtime/answer-rules.ts). */
export const KEPT_MARKS = ['x-echo', 'x-sum'] as const;

const list = (items: readonly string[]) => items.map((i) => `\`${i}\``).join(', ');

/** Every x- mark on a schema or property of the document's schemas, with the schemas carrying it. */
export function ruleMarks(doc: MockDocument): Map<string, Set<string>> {
  const marks = new Map<string, Set<string>>();
  const visit = (node: unknown, schema: string) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, schema);
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key in NEEDS_STATE || (KEPT_MARKS as readonly string[]).includes(key)) {
        if (!marks.has(key)) marks.set(key, new Set());
        marks.get(key)!.add(schema);
      } else if (key !== 'examples' && key !== 'example') visit(value, schema);
    }
  };
  for (const [name, schema] of Object.entries(doc.components.schemas)) visit(schema, name);
  return marks;
}

export function keptRules(doc: MockDocument): string {
  const sandbox = doc.info['x-sandbox'];
  const lines: string[] = ['**The mock keeps** (each needs the request and the spec only):', ''];
  const own = Object.keys(refusalCatalogue.refusals).length;
  const validation = Object.keys(refusalCatalogue.validationRefusals).length;
  lines.push(
    `- **Every refusal the server stubs make** (${own} of \`refusals\` and ${validation} of \`validationRefusals\` in spec/refusals.yaml, docs/REFUSALS.md): the same code and words as the sandbox, in the caller's wire format, read with the stubs' own reader and body limit.`,
  );
  lines.push(
    `- **Credentials**, for the accounts it knows: the sandbox merchant \`${sandbox.merchantUUID}\` and partner \`${sandbox.partnerUUID}\` (\`info.x-sandbox\`), and those of \`--accounts FILE\`. Any other account, a wrong API key or an access token it did not issue is refused -1, as the sandbox refuses them. The access tokens its getAccessToken answers carry their own proof (keyed with the merchant's passphrase), so any mock that knows the merchant takes them back; the spec's example token stands for the sandbox merchant.`,
  );
  const byRecipe = new Map<string, string[]>();
  for (const op of operations)
    for (const use of op.hashes) {
      const where = use.in === 'header' ? `${op.operationId} (${use.name})` : op.operationId;
      byRecipe.set(use.recipe, [...(byRecipe.get(use.recipe) ?? []), where]);
    }
  lines.push(
    `- **Message hashes**, each by its recipe (\`x-hash-recipes\`), with the account's passphrase: ${[...byRecipe]
      .map(([recipe, ops]) => `\`${recipe}\` (${ops.length === 1 ? ops[0] : `${ops.length} operations`})`)
      .join(', ')}. A wrong or missing one is refused as the sandbox refuses it.`,
  );
  const results = new Map<string, string[]>();
  for (const op of operations)
    for (const use of op.resultHashes)
      results.set(`${use.name} (\`${use.recipe}\`)`, [
        ...(results.get(`${use.name} (\`${use.recipe}\`)`) ?? []),
        op.operationId,
      ]);
  lines.push(
    `- **Result hashes** computed from their recipes with the account's passphrase: ${[...results]
      .map(([hash, ops]) => `${hash} in the results of ${ops.length === 1 ? ops[0] : `${ops.length} operations`}`)
      .join('; ')}.`,
  );
  const echoes: string[] = [];
  const sums: string[] = [];
  for (const name of Object.keys(doc.components.schemas).sort()) {
    const rules = answerRulesOf(doc.components.schemas[name]);
    if (rules.echoes.length)
      echoes.push(
        `\`${name}\`: ${rules.echoes
          .map(
            (e) =>
              `${e.name}${e.masked ? ' (masked: first six, XXXXXX, last four)' : ''}${e.custom ? ' ([] when not sent)' : ''}`,
          )
          .join(', ')}`,
      );
    for (const s of rules.sums) sums.push(`\`${name}\`.${s.name} = ${s.parts.join(' + ')}`);
  }
  lines.push(`- **Echoes** (\`x-echo\`): each field as sent, whatever the example says. ${echoes.join('; ')}.`);
  lines.push(`- **Sums** (\`x-sum\`), to the cent, after the echoes: ${sums.join('; ')}.`);
  lines.push(
    `- **Card numbers** never unmasked in an answer (the stubs' check), and the **result schemas**: every answer is held to its operation's own.`,
  );
  for (const name of SANDBOX_REFUSALS_KEPT) {
    const entry = refusalCatalogue.sandboxRefusals[name] as { code: string; when: string };
    lines.push(
      `- The sandbox's \`${entry.code}\`: ${entry.when.charAt(0).toLowerCase()}${entry.when.slice(1)} (runtime/card-fields.ts, the one reading of it).`,
    );
  }
  const faults = Object.keys(scenarios.faults);
  lines.push(
    `- **Scenarios** (\`${scenarios.header}\`, \`${scenarios.pathPrefix}/NAME/\`): every documented outcome of the operation, laid on its example, and internalError.`,
  );
  lines.push('', '**They need the sandbox** (a store or a clock):', '');
  const business = Object.entries(refusalCatalogue.sandboxRefusals)
    .filter(([name]) => !(SANDBOX_REFUSALS_KEPT as readonly string[]).includes(name))
    .map(([, entry]) => entry as { code: string; when: string });
  lines.push(
    `- **The sandbox's own refusals** (${business.length} entries of \`sandboxRefusals\`, docs/REFUSALS.md): most need what is stored (a capture above its authorisation, a card not in the vault); the rest are the sandbox's checks of a valid request, still written in its handlers (a card number that fails Luhn, an amount of zero, a backwards settlement range, a batch file's shape, a notification address its policy forbids). The mock answers a valid request with its example: ${business.map((e) => `\`${e.code}\``).join(', ')}.`,
  );
  const marks = ruleMarks(doc);
  for (const [mark, why] of Object.entries(NEEDS_STATE)) {
    const schemas = [...(marks.get(mark) ?? [])].sort();
    if (schemas.length) lines.push(`- \`${mark}\`, ${why} (${list(schemas)}): the example's value.`);
  }
  lines.push(
    `- **Scenario faults** of the connection (${list(faults)}): the mock refuses them -2 naming where the request put them (the header, or the base URL).`,
  );
  lines.push(
    `- **Identifiers and amounts the server makes** (a transactionID, a card's cardID and cardKey, a surcharge rate, an access token's expiry): the example's. A transactionID sent back is not looked up.`,
  );
  lines.push(
    '',
    'The contract suite judges the mock by the same rules: `--mock` skips only the checks that need state (the scenarios, the success of each operation reached on state the suite built) and says why.',
  );
  return lines.join('\n');
}

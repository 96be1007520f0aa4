// npm run generate: builds everything in generated/ from spec/. Deterministic: the same spec gives
// the same bytes, so a test can regenerate into a temporary folder and compare.
//
//   node scripts/generate.ts            write generated/ (spec/ is only read: the parts derived from
//                                       other parts are composed as it is bundled, compose.ts)
//   node scripts/generate.ts --out DIR  write into DIR instead (the freshness test uses this)
//   node scripts/generate.ts --docs     only generated/docs/index.html (npm run docs)
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { zipSync } from 'fflate';
import { SERVER_ENTRY } from './lib/as-installed.ts';
import { contractOperations, type Doc } from './lib/contract.ts';
import { valueExports } from './lib/entry-exports.ts';
import { bundledJson, bundledYaml, bundleSpec as bundle, SpecProblem } from './generators/bundle.ts';
import { clientModule } from './generators/client.ts';
import { controlTypesModule } from './generators/control.ts';
import { docsPage } from './generators/docs.ts';
import { handlersModule } from './generators/handlers.ts';
import { hashRecipesModule } from './generators/hash-recipes.ts';
import { hashVectorsFile } from './generators/hash-vectors.ts';
import { methodsModule } from './generators/methods.ts';
import { mockConfig } from './generators/mock.ts';
import { operationsModule, tableEntries } from './generators/operations.ts';
import { postmanCollection } from './generators/postman.ts';
import { protocolsModule } from './generators/protocols.ts';
import {
  errorCodesModule,
  refusalCatalogueModule,
  refusalCatalogues,
  refusalsDoc,
} from './generators/refusal-catalogue.ts';
import { rulesDoc } from './generators/rules-table.ts';
import { scenariosDoc, scenariosModule } from './generators/scenarios.ts';
import { specConstantsModule } from './generators/spec-constants.ts';
import { typesModule } from './generators/types.ts';
import { validatorDeclarations, validatorSources } from './generators/validators.ts';
import { webhooksModule } from './generators/webhooks.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const bundleSpec = (root = ROOT): Promise<Doc> => bundle(root);

/** For a command: a problem of the spec is printed as it is worded, and the command ends with status 1. */
export function toldInWords(error: unknown): never {
  if (!(error instanceof SpecProblem)) throw error;
  console.error(error.message);
  process.exit(1);
}

/** docs/RULES.md as the spec's rule marks write it. */
export async function rulesDocText(root = ROOT, bundled?: Doc): Promise<string> {
  const doc = bundled ?? (await bundleSpec(root));
  return rulesDoc(doc, contractOperations(doc));
}

/** docs/SCENARIOS.md as the spec's x-sandbox-scenarios and the descriptors' outcomes write it. */
export async function scenariosDocText(root = ROOT, bundled?: Doc): Promise<string> {
  const doc = bundled ?? (await bundleSpec(root));
  return scenariosDoc(doc, contractOperations(doc));
}

/** docs/REFUSALS.md as the refusal catalogue (spec/refusals.yaml) and the server entry's exports write it. */
export const refusalsDocText = async (root = ROOT, bundled?: Doc): Promise<string> =>
  refusalsDoc(refusalCatalogues(bundled ?? (await bundleSpec(root)), root), valueExports(root, SERVER_ENTRY.file));

/** The settlement example the spec describes, zipped reproducibly from its CSV. */
async function settlementExample(root: string): Promise<Uint8Array> {
  const csv = await readFile(path.join(root, 'spec/examples/getSettlement.csv'));
  return zipSync({ 'settlement.csv': [csv, { mtime: new Date('2026-01-01T00:00:00Z'), level: 6 }] });
}

/** Each validator's own module, `<folder>/<name>.cjs`. */
const moduleFiles = (folder: string, modules: Record<string, string>) =>
  Object.fromEntries(Object.entries(modules).map(([name, code]) => [`${folder}/${name}.cjs`, code]));

/** Everything in generated/, from the spec under `root` (a copy of the package in the architecture test). */
export async function generate(outDir: string, only?: 'docs', root = ROOT, bundled?: Doc): Promise<string[]> {
  const doc = bundled ?? (await bundleSpec(root));
  const ops = contractOperations(doc);
  if (only === 'docs') {
    await mkdir(path.join(outDir, 'docs'), { recursive: true });
    await writeFile(path.join(outDir, 'docs/index.html'), await docsPage(root, doc, ops));
    return ['docs/index.html'];
  }
  const entries = tableEntries(doc, ops);
  const validators = validatorSources(doc, entries);
  const catalogues = refusalCatalogues(doc, root);
  const files: Record<string, string | Uint8Array> = {
    'openapi.json': bundledJson(doc),
    'openapi.yaml': bundledYaml(doc),
    'types.ts': await typesModule(doc),
    'methods.ts': methodsModule(ops),
    'hash-recipes.ts': hashRecipesModule(doc),
    'hash-vectors.json': hashVectorsFile(doc),
    'operations.ts': operationsModule(doc, ops),
    'protocols.ts': protocolsModule(doc),
    'webhooks.ts': webhooksModule(doc, ops),
    'scenarios.ts': scenariosModule(doc, ops),
    'sandbox-control.ts': await controlTypesModule(root),
    'spec-constants.ts': specConstantsModule(doc),
    'handlers.ts': handlersModule(entries),
    'client.ts': clientModule(doc, entries),
    'mock.json': mockConfig(entries),
    'postman.json': postmanCollection(
      doc,
      ops,
      JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')).version,
    ),
    'validators/lazy.cjs': validators.lazy,
    'validators/requests.cjs': validators.requests.index,
    ...moduleFiles('validators/requests', validators.requests.modules),
    'validators/requests.d.cts': validatorDeclarations(
      validators.names.requests,
      'Request validators: one per request branch and form, and <operationId>Parameters.',
    ),
    'validators/results.cjs': validators.results.index,
    ...moduleFiles('validators/results', validators.results.modules),
    'validators/results.d.cts': validatorDeclarations(
      validators.names.results,
      'Result validators: one per result and refusal schema.',
    ),
    'examples/getSettlement.zip': await settlementExample(root),
    'docs/index.html': await docsPage(root, doc, ops),
    'error-codes.ts': errorCodesModule(catalogues),
    'refusal-catalogue.ts': refusalCatalogueModule(catalogues),
  };
  await rm(outDir, { recursive: true, force: true });
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(outDir, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
  return Object.keys(files);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: path.join(ROOT, 'generated') },
      docs: { type: 'boolean', default: false },
    },
  });
  const started = performance.now();
  // The spec is bundled once; each writer gets its own copy of the document (structuredClone is far
  // cheaper than bundling again), so none sees what another may have changed in it.
  const doc = await bundleSpec().catch(toldInWords);
  const own = () => structuredClone(doc);
  if (!values.docs)
    await writeFile(path.join(ROOT, 'docs/RULES.md'), await rulesDocText(ROOT, own()).catch(toldInWords));
  if (!values.docs)
    await writeFile(path.join(ROOT, 'docs/SCENARIOS.md'), await scenariosDocText(ROOT, own()).catch(toldInWords));
  const written = await generate(path.resolve(values.out), values.docs ? 'docs' : undefined, ROOT, own()).catch(
    toldInWords,
  );
  if (!values.docs) await writeFile(path.join(ROOT, 'docs/REFUSALS.md'), await refusalsDocText(ROOT, own()));
  console.log(`generated ${written.length} files in ${values.out} (${Math.round(performance.now() - started)} ms)`);
}

// A contract operation's first request example, signed as the package signs it (runtime/signing.ts):
// body hashes written into the body, and for header-authenticated operations the two credential
// headers and SVC-MESSAGEHASH. The generated clients of other tools (orval, @hey-api/openapi-ts) are
// called with it: they type and send requests, and signing stays the package's job.
import { hashRecipes } from '../../../generated/hash-recipes.ts';
import { type HashRecipe, signBodyHashes, signHeaders } from '../../../runtime/signing.ts';
import { contractOperations, type Doc, exampleValue } from '../../lib/contract.ts';
// Imported, not read from disk: the calling programs are bundles run from a scratch folder.
import published from '../../../generated/openapi.json' with { type: 'json' };

const recipe = (name: string) => hashRecipes[name as keyof typeof hashRecipes] as HashRecipe;

export function signedRequest(operationId: string) {
  const doc = published as unknown as Doc;
  const op = contractOperations(doc).find((o) => o.operationId === operationId);
  if (!op) throw new Error(`no operation ${operationId}`);
  const { merchantUUID, apiKey, passphrase } = doc.info['x-sandbox'];
  const example = op.examples.request[0]
    ? (exampleValue(doc, op.examples.request[0]) as Record<string, unknown>)
    : undefined;
  const params = Object.fromEntries(op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.example ?? '']));
  const bodyUses = (op.hashes ?? []).filter((h) => (h.in ?? 'body') === 'body');
  const body =
    example &&
    signBodyHashes(
      { ...example },
      bodyUses.map((h) => ({ name: h.name, recipe: recipe(h.recipe) })),
      passphrase,
    );
  const header = (op.hashes ?? []).find((h) => h.in === 'header');
  const scheme = (credential: string) =>
    op.security.map((s) => doc.components.securitySchemes[s]).find((s: any) => s['x-credential'] === credential)?.name;
  const headers = header
    ? signHeaders(
        { accountId: scheme('accountId'), apiKey: scheme('apiKey'), messageHash: scheme('messageHash') },
        recipe(header.recipe),
        { id: merchantUUID, apiKey, passphrase },
        { params, body },
      )
    : {};
  // The version header is a header parameter of every operation; generated clients leave it to the caller.
  const version = doc.components.parameters.ApiVersion;
  return { body, headers: { [version.name]: String(version.schema.const), ...headers }, params };
}

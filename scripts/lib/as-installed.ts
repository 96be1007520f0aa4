// The examples in examples/ import this checkout's files, so that they run here as they are; the guides
// and the API reference show them as a user of the installed package writes them, each checkout
// import replaced by the package entry it is published as (package.json's "exports").
/** The server stubs' entry (package.json's "./server"): its file in a checkout, and how an installed package imports it. */
export const SERVER_ENTRY = { file: 'server-stubs/index.ts', specifier: 'payment-gateway-contract/server' } as const;

const ENTRIES: Record<string, string> = {
  '../generated/client.ts': 'payment-gateway-contract/client',
  '../generated/openapi.json': 'payment-gateway-contract/openapi.json',
  [`../${SERVER_ENTRY.file}`]: SERVER_ENTRY.specifier,
  '../notifications/index.ts': 'payment-gateway-contract/notifications',
};

/** An example's source as the guides show it: its imports from the installed package. */
export function asInstalled(source: string): string {
  return source.replace(/from '([^']+)'/g, (whole, specifier: string) =>
    ENTRIES[specifier] ? `from '${ENTRIES[specifier]}'` : whole,
  );
}

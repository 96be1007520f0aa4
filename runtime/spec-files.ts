// The package's own documents, served beside the API by the stubs and by `payment-gateway docs`: the
// bundled spec in both its forms and the docs page, each with its media type. Not a wire format of
// the gateway: files, read as they are.
export interface SpecFile {
  /** The file's name in the package (payment-gateway-contract/<file>). */
  file: string;
  type: string;
}

export const SPEC_FILES: Readonly<Record<string, SpecFile>> = {
  '/openapi.json': { file: 'openapi.json', type: 'application/json' },
  '/openapi.yaml': { file: 'openapi.yaml', type: 'application/yaml' },
  '/docs': { file: 'docs', type: 'text/html; charset=utf-8' },
  '/docs/': { file: 'docs', type: 'text/html; charset=utf-8' },
};

// payment-gateway docs: the API reference (generated/docs/index.html, self-contained) served on a
// local port with the spec beside it, or its path printed to open from disk. This server is no
// sandbox: the page it serves names the sandbox its try-it console sends to (runtime/try-it-page.ts).
import { readFileSync } from 'node:fs';
import { parse, portOf, type CommandSpec, listen, packageFile, UsageError } from '../cli-kit/index.ts';
import { SPEC_FILES } from '../runtime/spec-files.ts';
import { withSandbox } from '../runtime/try-it-page.ts';
import { http } from '../runtime/node-http.ts';

/** The spec's server (its base_url's default): where `npm start` and `payment-gateway sandbox` listen. */
const specServer = (): string =>
  JSON.parse(readFileSync(packageFile('openapi.json'), 'utf8')).servers[0].variables.base_url.default;

export const docsSpec = (name: string): CommandSpec => ({
  name,
  usage: '[--port PORT] [--host HOST] [--sandbox URL] [--path]',
  summary:
    "Serves the API reference at / (and the spec at /openapi.json, /openapi.yaml) until stopped; with --path, prints the HTML file's path instead. The reference's try-it console sends to the sandbox at --sandbox (a reader can name another; the page remembers it).",
  options: {
    sandbox: {
      type: 'string',
      value: 'URL',
      env: 'PGW_SANDBOX_URL',
      default: "the spec's server",
      help: "the sandbox the try-it console sends to (it must allow this server's origin: PGW_SANDBOX_ALLOWED_ORIGINS)",
    },
    port: { type: 'string', short: 'p', value: 'PORT', default: '4012', help: 'port to listen on (0: any free port)' },
    host: { type: 'string', value: 'HOST', default: '127.0.0.1', help: 'address to listen on' },
    path: { type: 'boolean', help: 'print the path of the HTML file and exit' },
  },
});

const FILES: Record<string, [string, string]> = {
  '/': [SPEC_FILES['/docs']!.file, SPEC_FILES['/docs']!.type],
  ...Object.fromEntries(
    Object.entries(SPEC_FILES)
      .filter(([url]) => url !== '/docs/')
      .map(([url, { file, type }]) => [url, [file, type]]),
  ),
};

export async function docsCommand(name: string, argv: string[]): Promise<void> {
  const parsed = parse(docsSpec(name), argv);
  if (parsed === 'exit') return;
  const v = parsed.values;
  if (v.path) return void console.log(packageFile('docs'));
  const port = portOf(v.port as string | undefined, '--port', 4012);
  const host = (v.host as string | undefined) ?? '127.0.0.1';
  const sandbox = ((v.sandbox as string | undefined) ?? process.env.PGW_SANDBOX_URL ?? specServer()).replace(
    /\/+$/,
    '',
  );
  if (!/^https?:\/\/[^/]+$/.test(sandbox))
    throw new UsageError(`--sandbox must be a sandbox's base URL (http://127.0.0.1:4010), not '${sandbox}'`);
  const server = http.createServer((req, res) => {
    const file = req.method === 'GET' ? FILES[(req.url ?? '/').split('?')[0]!] : undefined;
    if (!file)
      return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the reference is at /\n');
    const bytes = readFileSync(packageFile(file[0]));
    res
      .writeHead(200, { 'content-type': file[1] })
      .end(file[0] === 'docs' ? withSandbox(bytes.toString('utf8'), sandbox) : bytes);
  });
  const bound = await listen(server, port, host, '--port');
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
  console.log(`API reference on http://${host}:${bound}/ (Ctrl-C stops it); its try-it console sends to ${sandbox}`);
}

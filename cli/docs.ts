// payment-gateway docs: the API reference (generated/docs/index.html, self-contained) served on a
// local port with the spec beside it, or its path printed to open from disk.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { parse, portOf, type CommandSpec, listen, packageFile } from '../cli-kit/index.ts';
import { SPEC_FILES } from '../runtime/spec-files.ts';

export const docsSpec = (name: string): CommandSpec => ({
  name,
  usage: '[--port PORT] [--host HOST] [--path]',
  summary:
    "Serves the API reference at / (and the spec at /openapi.json, /openapi.yaml) until stopped; with --path, prints the HTML file's path instead.",
  options: {
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
  const server = http.createServer((req, res) => {
    const file = req.method === 'GET' ? FILES[(req.url ?? '/').split('?')[0]!] : undefined;
    if (!file)
      return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the reference is at /\n');
    res.writeHead(200, { 'content-type': file[1] }).end(readFileSync(packageFile(file[0])));
  });
  const bound = await listen(server, port, host, '--port');
  console.log(`API reference on http://${host}:${bound}/ (Ctrl-C stops it)`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
}

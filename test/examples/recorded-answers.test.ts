// Each example reads the answers the public clients recorded from the real gateway (the corpus's XML
// answers: both empty-element forms, refusals, the root's white space) as those clients read them:
// every element by name, an empty one as ''. A server that answers with the recorded document stands
// in for the gateway, so this holds whatever the servers of this package answer.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCorpus, xmlAnswerFields } from '../compat/corpus.ts';
import { exampleSession, type ExampleSession, LANGUAGES, missing } from './interpreters.ts';

const recorded = loadCorpus().filter((e) => e.kind === 'answer' && e.wireBody !== undefined);

describe.each(LANGUAGES)('%s reads the recorded answers', (language) => {
  const why = missing(language);
  let answer = '';
  let server: http.Server;
  let url = '';
  let example: ExampleSession | undefined;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/xml' }).end(answer));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // One interpreter for all the answers (exampleSession: examples/<language>/run.<ext> run anew each time).
    if (!why)
      example = exampleSession(language, 'run', {
        MW_BASE_URL: url,
        MW_MERCHANT_UUID: 'm',
        MW_API_KEY: 'k',
        MW_PASSPHRASE: 'p',
      });
  });
  afterAll(async () => {
    await example?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it.skipIf(why).each(recorded.map((e) => [e.id, e] as const))(
    `%s${why ? ` (skipped: ${why})` : ''}`,
    async (_id, entry) => {
      answer = entry.wireBody!;
      const read = await example!.run(['queryCard', 'transactionID=1-1-1-1']);
      expect(read).toEqual(xmlAnswerFields(entry.wireBody!));
    },
  );
});

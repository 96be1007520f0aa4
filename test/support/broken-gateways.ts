// Deliberately broken implementations, for showing what the contract-test suite catches.
//   node test/support/broken-gateways.ts naive|buggy PORT   serves one of them
import http from 'node:http';
import { apiVersion, operations } from '../../generated/operations.ts';
import { protocols } from '../../generated/protocols.ts';
import { firstResultExample } from '../../contract/index.ts';
import { storeAccounts } from '../../sandbox/accounts.ts';
import { createSandbox, sandboxHandlers, type RunningSandbox } from '../../sandbox/index.ts';
import { bodyBytes, createGateway, createNodeServer } from '../../server-stubs/index.ts';
import { compile } from '../../server-stubs/core/router.ts';

/** Answers every operation's example result whatever it is sent: no validation, no authentication. */
export function naiveServer(): http.Server {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let method: string | undefined;
      try {
        method = JSON.parse(Buffer.concat(chunks).toString() || '{}').method;
      } catch {
        method = undefined;
      }
      const pathname = (req.url ?? '/').split('?')[0]!;
      const op = operations.find(
        (o) =>
          o.verb === req.method && compile(o.path).pattern.test(pathname) && (o.method === null || o.method === method),
      );
      const result = op ? firstResultExample(op) : { responseCode: '0', responseMessage: 'ok' };
      const body = result instanceof Uint8Array ? Buffer.from(result) : JSON.stringify(result);
      res.writeHead(op?.status ?? 200, {
        'content-type': op?.resultType === 'application/zip' ? 'application/zip' : 'application/json',
      });
      res.end(body);
    });
  });
}

/** The sandbox with three bugs: captures beyond the authorisation, a card key never rotated, a drifted result. */
export async function buggySandbox(): Promise<http.Server> {
  const sb = await createSandbox({ dbPath: ':memory:' });
  const handlers = sandboxHandlers(sb);
  const gateway = createGateway({
    accounts: storeAccounts(sb.store, sb.clock),
    responseValidation: 'log', // so that the drift reaches the client, as a production server would let it
    handlers: {
      ...handlers,
      processCapture: async (input, context) => {
        const result = (await handlers.processCapture(input, context)) as Record<string, unknown>;
        // Bug: a capture beyond the authorisation is answered as approved.
        if (/greater than the transaction amount/.test(String(result.responseMessage))) {
          return {
            responseCode: '0',
            responseMessage: 'Transaction approved',
            transactionID: input.body.transactionID,
            authCode: '1',
            authResponseCode: '00',
            authMessage: 'Approved',
            receiptNo: '1',
            custom1: [],
            custom2: [],
            custom3: [],
          };
        }
        return result;
      },
      tokenProcessCard: async (input, context) => {
        const card = await sb.store.get('SELECT card_key FROM cards WHERE card_id = ?', input.body.cardID);
        const result = await handlers.tokenProcessCard(input, context);
        // Bug: the key is put back, so the old key keeps working.
        if (card)
          await sb.store.run('UPDATE cards SET card_key = ? WHERE card_id = ?', card.card_key, input.body.cardID);
        return result;
      },
      getSurcharge: async (input, context) => {
        const result = (await handlers.getSurcharge(input, context)) as Record<string, unknown>;
        // Bug: an amount as a number, not the contract's two-decimal string.
        return Number(result.responseCode) === 0 ? { ...result, totalAmount: Number(result.totalAmount) } : result;
      },
    } as typeof handlers,
  });
  return createNodeServer(gateway);
}

/**
 * The sandbox behind a front that takes form requests and answers them in JSON: it reads the form,
 * sends it on as JSON in the JSON mode and passes the JSON answer back, as a server that does not
 * know the form mode's XML would.
 */
export function jsonToFormServer(sb: RunningSandbox): http.Server {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString();
      // JSON requests (the suite's credential proof among them) are served as they are; a form is
      // read, answered as its JSON twin.
      const json = String(req.headers['content-type'] ?? '').includes('json');
      const read = protocols.byId('form')!.read(raw);
      const headers = {
        ...req.headers,
        'content-type': 'application/json',
        [apiVersion.name.toLowerCase()]: apiVersion.value,
      };
      const answer = await sb.gateway.handle({
        verb: req.method ?? 'POST',
        url: req.url ?? '/',
        headers: headers as Record<string, string>,
        body: json ? raw : 'ok' in read ? JSON.stringify(read.ok) : '',
      });
      res.writeHead(answer.status, answer.headers);
      res.end(await bodyBytes(answer.body));
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [kind, port] = process.argv.slice(2);
  (kind === 'naive' ? naiveServer() : await buggySandbox()).listen(Number(port ?? 4620), '127.0.0.1', () =>
    console.log(`${kind} gateway ready`),
  );
}

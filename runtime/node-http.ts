import type * as Http from 'node:http';
import type * as Https from 'node:https';
import { createRequire } from 'node:module';

// node:http by require, not import: an ES import of node:http builds its module namespace, which
// reads its every export, WebSocket's included, and so loads undici (about 30 ms of CPU at each
// start, a quarter of the server's cold start; nodejs/node#57649, #59686). Required, it is 3 ms.
// The server (server-stubs/http) and the tools' client (runtime/http-transport.ts) take it from here.
const nodeRequire = createRequire(import.meta.url);
export const http = nodeRequire('node:http') as typeof Http;

let tls: typeof Https | undefined;
/** node:https, required when a client first needs it (a server never does). */
export const https = (): typeof Https => (tls ??= nodeRequire('node:https') as typeof Https);

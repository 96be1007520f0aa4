import type * as Http from 'node:http';
import { createRequire } from 'node:module';

// node:http by require, not import: an ES import of node:http builds its module namespace, which
// reads its every export, WebSocket's included, and so loads undici (about 30 ms of CPU at each
// start, a quarter of the server's cold start; nodejs/node#57649, #59686). Required, it is 3 ms.
export const http = createRequire(import.meta.url)('node:http') as typeof Http;

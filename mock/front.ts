// The mock's front: a thin node:http proxy before Prism that reads the body's `method` and asks
// Prism for that method's own result example (Prefer: example=…), the pattern Prism's maintainers
// point to, since Prism cannot choose an example from the body. A client's own Prefer header wins.
// Prism still validates every request and answers 422 for an invalid one.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { operations } from '../generated/operations.ts';
import { bodyErrors, normalised, withoutUnknownFields } from '../server-stubs/core/request.ts';
import { compile, methodPath } from '../server-stubs/core/router.ts';

interface MockRoute {
  operationId: string;
  verb: string;
  path: string;
  method: string | null;
  example: string;
  refusalExample: string;
  accept?: string;
  file?: string;
}

const require = createRequire(import.meta.url);
const configFile = require.resolve('payment-gateway-contract/mock.json');
const routes: (MockRoute & { pattern: RegExp })[] = (JSON.parse(readFileSync(configFile, 'utf8')).routes as MockRoute[]).map((r) => ({
  ...r,
  pattern: compile(r.path).pattern,
}));

export function routeFor(verb: string, pathname: string, body: unknown): MockRoute | undefined {
  const method = typeof body === 'object' && body !== null ? (body as { method?: unknown }).method : undefined;
  return routes.find((r) => r.verb === verb && r.pattern.test(pathname) && (r.method === null || r.method === method));
}

export interface Violation {
  location: string[];
  severity: string;
  code?: string | number;
  message: string;
}

export interface FrontOptions {
  /** Where Prism listens. */
  target: { host: string; port: number };
  /** In proxy mode Prism answers from the upstream: the front only passes requests through. */
  choosesExamples: boolean;
  /** Each contract violation Prism finds in proxy mode (in the request or the upstream's answer). */
  onViolation?: (request: string, violations: Violation[]) => void;
}

/**
 * Prism answers an invalid request with the operation's documented 400 (and its first example) and
 * lists the violations of every oneOf branch in a header. This gives what Prism gives when no error
 * response is documented: 422 problem+json listing each violation, those of the method's own branch.
 */
function unprocessable(route: MockRoute | undefined, body: unknown, header: string | undefined): Buffer {
  const op = route && operations.find((o) => o.operationId === route.operationId);
  const failed = op?.request && body !== undefined ? bodyErrors(op, body) : undefined;
  let validation: Violation[];
  if (failed) {
    validation = failed.errors.map((e) => ({
      location: ['request', 'body', ...e.instancePath.split('/').slice(1), ...(e.params.missingProperty ? [e.params.missingProperty as string] : []), ...(e.params.additionalProperty ? [e.params.additionalProperty as string] : [])],
      severity: 'Error',
      code: e.keyword,
      message: e.message ?? e.keyword,
    }));
  } else {
    const list = header?.slice(header.indexOf('['));
    try {
      validation = list ? (JSON.parse(list) as Violation[]) : [];
    } catch {
      validation = [{ location: ['request'], severity: 'Error', message: header ?? 'Invalid request' }];
    }
  }
  return Buffer.from(
    JSON.stringify({
      type: 'https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY',
      title: 'Invalid request',
      status: 422,
      detail: `Your request is not valid: it breaks ${failed ? failed.form : 'the contract'}.`,
      validation,
    }),
  );
}

export function createFront({ target, choosesExamples, onViolation }: FrontOptions): http.Server {
  const files = new Map<string, Buffer>();
  const fileFor = (name: string) => {
    if (!files.has(name)) files.set(name, readFileSync(path.join(path.dirname(configFile), name)));
    return files.get(name)!;
  };
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
      } catch {
        body = undefined; // Prism answers malformed JSON itself.
      }
      let url = req.url ?? '/';
      let rewritten = false;
      // The gateway takes its paths with or without a trailing slash (clients post to /post/); Prism does not.
      const bare = url.split('?')[0]!;
      if (choosesExamples && bare.length > 1 && bare.endsWith('/')) url = (bare.replace(/\/+$/, '') || '/') + url.slice(bare.length);
      // POST /token/processCard (x-method-in-path): Prism knows /token, with the method in the body.
      const named = choosesExamples ? methodPath(url.split('?')[0]!) : undefined;
      if (named && typeof body === 'object' && body !== null && !Array.isArray(body)) {
        body = { method: named.method, ...body };
        url = named.path + url.slice(url.split('?')[0]!.length);
        rewritten = true;
      }
      const route = choosesExamples ? routeFor(req.method ?? 'GET', url.split('?')[0]!, body) : undefined;
      const headers: http.OutgoingHttpHeaders = { ...req.headers, host: `${target.host}:${target.port}` };
      const chosen = Boolean(route && !req.headers.prefer);
      if (route && chosen) headers.prefer = `example=${route.example}`;
      if (route?.accept && (!req.headers.accept || req.headers.accept === '*/*')) headers.accept = route.accept;
      // The gateway ignores body fields no form declares (x-unknown-fields); Prism, reading the closed
      // schemas, would refuse them. They are dropped here, so the mock answers as the gateway does.
      let forwarded = raw;
      const op = route && operations.find((o) => o.operationId === route.operationId);
      const known = op ? withoutUnknownFields(op, body) : undefined;
      const read = op && known ? normalised(op, known.body) : body;
      if (known && (known.unknown.length || rewritten || read !== known.body)) {
        forwarded = Buffer.from(JSON.stringify(read));
        headers['content-length'] = String(forwarded.length);
        delete headers['transfer-encoding'];
      }
      const upstream = http.request({ ...target, method: req.method, path: url, headers }, (answer) => {
        const status = answer.statusCode!;
        // Prism cannot serve a binary example inline: a zip result is answered with its file.
        if (route?.file && chosen && status < 300 && answer.headers['content-type']?.startsWith(route.accept!)) {
          answer.resume();
          const bytes = fileFor(route.file);
          res.writeHead(status, { 'content-type': route.accept!, 'content-length': bytes.length });
          return res.end(bytes);
        }
        if (status < 400) {
          res.writeHead(status, answer.headers);
          return answer.pipe(res);
        }
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', () => {
          let out: Buffer = Buffer.concat(parts);
          let outHeaders = answer.headers;
          const violations = answer.headers['sl-violations'] as string | undefined;
          if (choosesExamples && violations && status === 400) {
            out = unprocessable(route, body, violations);
            outHeaders = { ...answer.headers, 'content-type': 'application/problem+json', 'content-length': String(out.length) };
            res.writeHead(422, outHeaders);
            return res.end(out);
          }
          if (!choosesExamples && onViolation) {
            try {
              const problem = JSON.parse(out.toString('utf8')) as { type?: string; validation?: Violation[] };
              if (problem.type?.endsWith('#VIOLATIONS') && problem.validation) {
                const seen = new Set<string>();
                const unique = problem.validation.filter((v) => !seen.has(JSON.stringify(v)) && seen.add(JSON.stringify(v)));
                onViolation(`${req.method} ${url}`, unique);
              }
            } catch {
              // Not Prism's problem document: the upstream's own error, passed on as it is.
            }
          }
          res.writeHead(status, outHeaders);
          res.end(out);
        });
      });
      upstream.on('error', (error) => {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ responseCode: '-4', responseMessage: `Mock unavailable: ${error.message}` }));
      });
      upstream.end(forwarded);
    });
  });
}

// The gateway's own console, for the team running a server on the stubs: one line per refusal, per
// request no handler answers and per answer that breaks the contract. The seam is the `logger`
// option (Fastify's idea, kept tiny: give an object with the levels, or `false` for none).
// Development is any NODE_ENV but `production` and `test`: a server started by hand logs every line.
// A production server logs its own faults only (an answer that breaks the contract, a 5xx, a handler
// that failed): log mode sends a broken answer on, and the line is then the only trace of it; the
// refusals are the callers' faults, too many to log by default. A test run (vitest sets
// NODE_ENV=test) stays silent unless given a logger.
// The fields are names and rules, never a value: the refusal messages name fields, never echo them.
import { logSafe, logWriter } from '../../runtime/log-line.ts';
import type { Logger } from './types.ts';

const silent: Logger = { warn() {}, error() {} };

/**
 * `key=value` pairs after the message, on one line; a value with spaces is quoted. A warning or an
 * error says its level first (`ERROR answered 5xx …`), so that among the many refusals (the caller's
 * fault, at info) the server's own faults stand out and can be searched for.
 */
export function logLine(message: string, fields: Record<string, unknown> = {}, level?: 'WARN' | 'ERROR'): string {
  const pairs = Object.entries(fields)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => {
      const text = String(v).replace(/\s+/g, ' ');
      return `${k}=${/[\s"=]/.test(text) ? JSON.stringify(text) : text}`;
    });
  return [`payment-gateway:${level ? ` ${level}` : ''} ${message}`, ...pairs].join(' ');
}

/**
 * A writer to stderr that takes the stream when it first writes a line: process.stderr is made when it
 * is first read (a stream over the descriptor), which a server that starts and never logs (production:
 * its own faults only) then never pays for at its start.
 */
function toStderr(): (line: string) => void {
  let write: ((line: string) => void) | undefined;
  return (line) => {
    write ??= logWriter(process.stderr);
    write(line);
  };
}

/**
 * One line on stderr per entry: what a newcomer's server shows on its own console. Each line is made
 * safe before it is written, whatever `write` is (runtime/log-line.ts: the fields name what a caller
 * sent, an unknown field's name among them): card numbers masked, control characters escaped.
 */
export const consoleLogger = (write: (line: string) => void = toStderr()): Logger => ({
  info: (message, fields) => write(logSafe(logLine(message, fields))),
  warn: (message, fields) => write(logSafe(logLine(message, fields, 'WARN'))),
  error: (message, fields) => write(logSafe(logLine(message, fields, 'ERROR'))),
});

export const inDevelopment = (env: NodeJS.ProcessEnv = process.env): boolean =>
  env.NODE_ENV !== 'production' && env.NODE_ENV !== 'test';

/**
 * The logger the gateway uses: the one given, none for `false`, else the console: every line in
 * development, the errors alone in production, none in a test run.
 */
export function chooseLogger(given: Logger | false | undefined, env: NodeJS.ProcessEnv = process.env): Logger {
  if (given === false) return silent;
  if (given) return given;
  if (inDevelopment(env)) return consoleLogger();
  return env.NODE_ENV === 'production' ? { warn() {}, error: consoleLogger().error } : silent;
}

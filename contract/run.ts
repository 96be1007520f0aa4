#!/usr/bin/env node
// npm run contract -- --base-url URL (or the package's bin, payment-gateway-contract-test): holds an
// implementation of the gateway to the contract, operation by operation. Exit 1 on any failure.
//
//   --base-url URL              the implementation (PGW_BASE_URL; default http://127.0.0.1:4010)
//   --merchant-uuid, --api-key, --passphrase, --partner-uuid, --partner-api-key, --partner-passphrase
//                               credentials (PGW_MERCHANT_UUID, PGW_API_KEY, PGW_PASSPHRASE, PGW_PARTNER_UUID,
//                               PGW_PARTNER_API_KEY, PGW_PARTNER_PASSPHRASE; default: the spec's x-sandbox)
//   --mock                      the target is the Prism mock: stateless checks only
//   --wire both|json|form       the wire formats of the checks (default both: every format the spec says
//                               the server serves; json or form narrows the run; docs/WIRE-FORMATS.md)
//   --only / --skip LIST        operationIds, tags or check ids (a failure prints its own), comma-separated
//   --runs N --seed S           property-based requests per operation (default 4) and their seed
//   --junit FILE --json FILE    reports (default test-results/contract.xml, .json)
//   --concurrency N             checks in flight at once (default 8)
//   --quiet                     print failed operations and the totals only (the reports keep every check)
//   --mask-secrets              print a failure's API key and access token as the PGW_* variables they come
//                               from, its hash recomputed by payment-gateway sign (default: as sent)
//   --min-coverage P            fail when the run reached less than P % of the documented answers
//                               (default 90 against an implementation; the mock keeps no state and has none,
//                               and neither has a run of named checks, as a failure's replay: line makes)
//   --allow-unreached           an operation whose success answer the run could not reach is skipped, not
//                               failed (by default the suite builds the state each one needs, and fails it)
//   --timeout S --deadline S --max-answer-bytes N
//                               the suite as a client (runtime/bounded-fetch.ts): seconds for one exchange
//                               (15), for the whole run (1800), the most bytes of one answer read (16 MiB);
//                               no redirect is followed; after 3 exchanges in a row without an answer the
//                               run stops in one line
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Check, RunContext } from './checks.ts';
import type { Credentials } from './http.ts';
import type { BoundedClient } from '../runtime/bounded-fetch.ts';
import type { Result } from './report.ts';
import type { Wire } from './requests.ts';
import { logSafe, logSafeLines } from '../runtime/log-line.ts';
import { readArguments } from './usage.ts';

/** The run's limits as a client of the server it tests (runtime/bounded-fetch.ts), unless the options say otherwise. */
export const DEFAULT_RUN_LIMITS = { timeoutSeconds: 15, deadlineSeconds: 1800, maxAnswerBytes: 16 * 1024 * 1024 };

/** The share of documented answers a run against an implementation must reach unless --min-coverage says less. */
export const DEFAULT_MIN_COVERAGE = 90;

/**
 * Run as the program, its arguments are read before the suite loads: --help, --version and a mistake
 * in the arguments answer without loading it (`--help` took 0.27 s of CPU with the suite, 0.07 s without).
 */
const parsed = (() => {
  if (!process.argv[1] || realpathSync(process.argv[1]) !== fileURLToPath(import.meta.url)) return undefined;
  // Whatever goes wrong ends in one line (the stack with DEBUG=1), never a crash dump.
  const crashed = (error: unknown) => {
    console.error(`payment-gateway-contract-test: ${logSafe(error instanceof Error ? error.message : String(error))}`);
    if (process.env.DEBUG && error instanceof Error) console.error(error.stack);
    process.exit(2);
  };
  process.on('uncaughtException', crashed);
  process.on('unhandledRejection', crashed);
  const read = readArguments(process.argv.slice(2));
  if ('exitCode' in read) {
    if (read.out !== undefined) console.log(read.out);
    if (read.err !== undefined) console.error(read.err);
    process.exit(read.exitCode);
  }
  return read;
})();

// The suite, loaded once the program's arguments are read (or at once, as a module of the package).
const [
  { CredentialsRefused, credentialKinds, proveCredentials },
  { DetailedFailure, operationChecks },
  { exchangeClient, withClient },
  { boundedClient, ExchangeFailed },
  { summary, writeReports },
  { operations },
  { protocols },
  { doc },
  { scenarioChecks },
  { recording },
  { describeSent, replayCommand },
  { CLI_COMMAND },
  { maskCardNumbers },
  { StatePool },
  { successChecks },
  { Coverage, coverageSummary },
] = await Promise.all([
  import('./credentials.ts'),
  import('./checks.ts'),
  import('./http.ts'),
  import('../runtime/bounded-fetch.ts'),
  import('./report.ts'),
  import('../generated/operations.ts'),
  import('../generated/protocols.ts'),
  import('./requests.ts'),
  import('./scenarios.ts'),
  import('./recording.ts'),
  import('./replay.ts'),
  import('../runtime/command.ts'),
  import('../server-stubs/index.ts'),
  import('./state-pool.ts'),
  import('./state.ts'),
  import('./coverage.ts'),
]);

/**
 * Milliseconds since `started`, to the microsecond. performance.now()'s differences carry 13 or more
 * digits after the point; one such number in 20 starts with 2-6 and passes Luhn: a report's
 * `"ms": 363.59992589373206` read as a card number by the checks that no report holds one.
 */
const elapsedMs = (started: number) => Math.round((performance.now() - started) * 1000) / 1000;

/**
 * A check's error as one line, with its cause where it has one: fetch's `fetch failed` says only
 * that the request got no answer; its cause says why (`other side closed`, ECONNREFUSED, …).
 */
function failureReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { message?: string; code?: string } | undefined;
  const why = [cause?.code, cause?.message].filter(Boolean).join(' ');
  return why ? `${error.message} (${why})` : error.message;
}
export interface RunOptions {
  base: string;
  creds: Credentials;
  mock?: boolean;
  only?: string[];
  skip?: string[];
  runs?: number;
  seed?: number;
  concurrency?: number;
  /** Filled with what the run reached (see coverage.ts). */
  coverage?: import('./coverage.ts').Coverage;
  /** A failure prints its API key and access token as PGW_* variables, its hash recomputed by `payment-gateway sign`. */
  maskSecrets?: boolean;
  /**
   * The wire formats (docs/WIRE-FORMATS.md): `both` (default: what the spec says the server serves,
   * x-wire-formats: every operation in JSON, and those of the form-mode paths again form-encoded,
   * their answers required in XML), or one of them on purpose: `json`, or `form` (the operations that
   * take the form/XML mode only; the stateful scenarios, which drive the typed client, stay JSON).
   */
  wire?: Wire | 'both';
  /** Skip, not fail, an operation whose success answer the run cannot reach. */
  allowUnreached?: boolean;
  /** Where the run says what it decided before its checks (an access token the server did not issue). */
  log?: (line: string) => void;
  /**
   * The client every exchange goes through (runtime/bounded-fetch.ts): by default one with the default
   * limits (15 s an exchange, 16 MiB an answer, no deadline, giving up after 3 exchanges in a row
   * without an answer). Pass one to set the limits and to read afterwards whether it gave up.
   */
  client?: BoundedClient;
}

/** Each check with its id, `<operationId>/<its name in words>` (a form check's name starts `form-`). */
function withIds(checks: Check[]): (Check & { id: string })[] {
  const seen = new Set<string>();
  return checks.map((c) => {
    const base = `${c.operationId}/${c.wire ? `${c.wire}-` : ''}${c.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')}`;
    let id = base;
    for (let n = 2; seen.has(id); n++) id = `${base}-${n}`;
    seen.add(id);
    return { ...c, id };
  });
}

/**
 * Every check of a run in this wire format, with its id: what --only takes to replay one. The
 * success checks (kind `state`, state.ts) come last: they run one at a time on the state the others left.
 */
export function allChecks(wire: Wire | 'both' = 'both'): (Check & { id: string })[] {
  let checks = checksByWire.get(wire);
  if (!checks) {
    checks = checksOf(wire);
    checksByWire.set(wire, checks);
  }
  return [...checks];
}

// A check is made from the contract alone and keeps nothing between runs (a run's state is its
// context's), so the list is made once per wire format: a process that runs the suite many times
// (a test file, a watch loop) made its 1,648 checks again for each, 40 ms a run.
const checksByWire = new Map<Wire | 'both', readonly (Check & { id: string })[]>();

function checksOf(wire: Wire | 'both'): (Check & { id: string })[] {
  return withIds([
    // `both`: the spec's own protocol's checks, then each other protocol's, marked with its wire.
    ...protocols.all.filter((p) => wire === 'both' || p.id === wire).flatMap((p) => operationChecks(p.id)),
    ...scenarioChecks(),
    ...successChecks(operations),
  ]);
}

const matches = (c: Check & { id: string }, x: string) => x === c.id || x === c.operationId || c.tags.includes(x);
/**
 * Whether the run's --only and --skip select a check. A check --only names by its id (a failure's
 * replay: line) runs unless --skip names its id too: beside it, --skip's operationIds and tags narrow
 * what it sends (the model-based sequences), they do not deselect it, so that a replay line that
 * skips the check's own operation still reruns it.
 */
const selected = (c: Check & { id: string }, only?: string[], skip?: string[]) =>
  only?.includes(c.id)
    ? !skip?.includes(c.id)
    : (!only?.length || only.some((x) => matches(c, x))) && !skip?.some((x) => matches(c, x));

/**
 * Every operationId and tag: the names in --only and --skip that select operations, not checks (the
 * CLI takes these and the check ids, and refuses any other name).
 */
export const operationNames: ReadonlySet<string> = new Set(operations.flatMap((o) => [o.operationId, ...o.tags]));

/** An operation's names in --only and --skip: its operationId and its tags. */
const namesOf = (operationId: string) => [
  operationId,
  ...(operations.find((o) => o.operationId === operationId)?.tags ?? []),
];

/** Names as --only and --skip take them, a tag of several words quoted: `'Direct API',Token`. */
const listed = (names: string[]) => names.map((x) => (/\s/.test(x) ? `'${x}'` : x)).join(',');

/**
 * The operations the run's --only and --skip select, by operationId or tag (check ids select their
 * checks, not operations), and what left some out, in words (RunContext.leftOutBy): undefined when
 * they name none, as a failure's replay: line names a check alone.
 */
function operationSelection(
  only?: string[],
  skip?: string[],
): Required<Pick<RunContext, 'selects' | 'leftOutBy'>> | undefined {
  const named = (list?: string[]) => (list ?? []).filter((x) => operationNames.has(x));
  const [inOnly, inSkip] = [named(only), named(skip)];
  if (!inOnly.length && !inSkip.length) return undefined;
  const byOnly = (operationId: string) => !inOnly.length || inOnly.some((x) => namesOf(operationId).includes(x));
  const bySkip = (operationId: string) => !inSkip.some((x) => namesOf(operationId).includes(x));
  return {
    selects: (operationId) => byOnly(operationId) && bySkip(operationId),
    leftOutBy: (operationIds) => {
      const kept = operationIds.filter(byOnly);
      if (!kept.length) return `--only ${listed(inOnly)} selects none of them: add one to --only`;
      const skipping = listed(inSkip.filter((x) => kept.some((id) => namesOf(id).includes(x))));
      return kept.length === operationIds.length
        ? `--skip ${skipping} leaves out every one of them: take one out of --skip`
        : `--only ${listed(inOnly)} selects ${kept.join(', ')} of them, and --skip ${skipping} leaves ${kept.length === 1 ? 'it' : 'those'} out: take one out of --skip`;
    },
  };
}

export function runContract(options: RunOptions): Promise<Result[]> {
  return withClient(options.client ?? boundedClient(), () => runWithClient(options));
}

async function runWithClient(options: RunOptions): Promise<Result[]> {
  const ctx: RunContext = {
    base: options.base.replace(/\/$/, ''),
    creds: { ...options.creds },
    mock: Boolean(options.mock),
    runs: options.runs ?? 4,
    seed: options.seed ?? 20261122,
    // Success answers are counted whether or not the caller asked for the coverage table.
    coverage: options.coverage ?? new Coverage(),
    pool: new StatePool(),
    allowUnreached: Boolean(options.allowUnreached),
    wire: 'json',
    ...(options.log ? { note: options.log } : {}),
  };
  const selection = operationSelection(options.only, options.skip);
  if (selection) Object.assign(ctx, selection);
  const chosen = allChecks(options.wire).filter((c) => selected(c, options.only, options.skip));
  // The credentials the chosen checks take proved first (each kind accepted), and a real access token
  // for the operations that take one.
  if (!ctx.mock) {
    const ids = new Set(chosen.map((c) => c.operationId));
    const kinds = credentialKinds(operations.filter((op) => ids.has(op.operationId)));
    const proof = await proveCredentials(ctx.base, ctx.creds, kinds);
    if (proof.accessToken) ctx.creds.accessToken = proof.accessToken;
    for (const note of proof.notes) options.log?.(note);
  }
  const checks = chosen.filter((c) => c.kind !== 'state' && !c.alone);
  // Then, one at a time: each operation's success, reached on the state the checks above left.
  const last = chosen.filter((c) => c.kind === 'state');
  // Last, each by itself: the checks that move the server's clock (on a sandbox).
  const alone = chosen.filter((c) => c.kind !== 'state' && c.alone);
  const results: Result[] = new Array(chosen.length);
  const mask = options.maskSecrets ? ctx.creds : undefined;
  await runChecks(checks, 0, results, ctx, options.concurrency ?? 8, mask);
  await runChecks(last, checks.length, results, ctx, 1, mask);
  await runChecks(alone, checks.length + last.length, results, ctx, 1, mask);
  return results;
}

async function runChecks(
  checks: (Check & { id: string })[],
  offset: number,
  results: Result[],
  ctx: RunContext,
  concurrency: number,
  mask: Credentials | undefined,
) {
  let next = 0;
  const client = exchangeClient();
  const worker = async () => {
    while (next < checks.length) {
      const i = next++;
      const check = checks[i]!;
      // Once the client has given up on the server (or the deadline passed), nothing more is sent.
      if (client.gaveUp) {
        results[offset + i] = {
          id: check.id,
          operationId: check.operationId,
          tags: check.tags,
          kind: check.kind,
          name: check.name,
          status: 'skipped',
          reason: `not sent: ${client.gaveUp}`,
          ms: 0,
        };
        continue;
      }
      const started = performance.now();
      const base = {
        id: check.id,
        operationId: check.operationId,
        tags: check.tags,
        kind: check.kind,
        name: check.name,
      };
      const {
        value: outcome,
        error,
        last,
      } = await recording(() => check.run(check.wire ? { ...ctx, wire: check.wire } : ctx));
      if (error === undefined)
        results[offset + i] =
          outcome && 'skip' in outcome
            ? { ...base, status: 'skipped', reason: outcome.skip, ms: elapsedMs(started) }
            : { ...base, status: 'passed', ms: elapsedMs(started) };
      else {
        // What was sent, and how to send it again: the request alone, and the check with its seed.
        // A card number in any of it (the published test cards the suite sends, one an answer
        // echoed) is masked, as everywhere the package prints or stores one: the console, the JSON
        // and JUnit reports. The `again:` command then sends the masked number; `replay:` reruns
        // the check exactly.
        const unreached = check.kind === 'state' && ctx.allowUnreached;
        const skipped = check.replaySkip?.(ctx) ?? [];
        results[offset + i] = {
          ...base,
          status: unreached ? 'skipped' : 'failed',
          reason: maskCardNumbers(failureReason(error)),
          ...(error instanceof DetailedFailure ? { details: error.details.map((d) => maskCardNumbers(d)) } : {}),
          ms: elapsedMs(started),
          ...(last
            ? { request: maskCardNumbers(describeSent(last, mask)), again: maskCardNumbers(replayCommand(last, mask)) }
            : {}),
          replay: `${CLI_COMMAND} contract --base-url ${ctx.base}${check.wire ? ` --wire ${check.wire}` : ''} --only ${check.id}${skipped.length ? ` --skip ${skipped.join(',')}` : ''} --seed ${ctx.seed}`,
        };
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

if (parsed) {
  const a = parsed.values;
  const env = process.env;
  const sandbox = doc.info['x-sandbox'];
  const creds: Credentials = {
    merchantUUID: a['merchant-uuid'] ?? env.PGW_MERCHANT_UUID ?? sandbox.merchantUUID,
    apiKey: a['api-key'] ?? env.PGW_API_KEY ?? sandbox.apiKey,
    passphrase: a.passphrase ?? env.PGW_PASSPHRASE ?? sandbox.passphrase,
    partnerUUID: a['partner-uuid'] ?? env.PGW_PARTNER_UUID ?? sandbox.partnerUUID,
    partnerApiKey: a['partner-api-key'] ?? env.PGW_PARTNER_API_KEY ?? a['api-key'] ?? env.PGW_API_KEY ?? sandbox.apiKey,
    partnerPassphrase:
      a['partner-passphrase'] ?? env.PGW_PARTNER_PASSPHRASE ?? a.passphrase ?? env.PGW_PASSPHRASE ?? sandbox.passphrase,
  };
  const base = a['base-url'] ?? env.PGW_BASE_URL ?? 'http://127.0.0.1:4010';
  const list = (s?: string) =>
    s
      ?.split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  const stop = (message: string): never => {
    console.error(`payment-gateway-contract-test: ${logSafe(message)}`);
    process.exit(2);
  };
  // Names that select nothing would make a green run that checked nothing.
  const checkIds = new Set(allChecks('both').map((c) => c.id));
  const known = new Set([...checkIds, ...operationNames]);
  // A run of named checks alone (a failure's replay: line) reaches what those checks reach: no bar.
  const onlyChecks = (list(a.only) ?? []).length > 0 && list(a.only)!.every((x) => !operationNames.has(x));
  for (const option of ['only', 'skip'] as const) {
    const unknown = (list(a[option] as string | undefined) ?? []).filter((x) => !known.has(x));
    if (unknown.length)
      stop(
        `--${option} ${unknown.join(',')}: no operationId or tag of that name (operationIds are like processCapture, tags like 'Direct API')`,
      );
  }
  for (const [option, rule, holds] of [
    ['runs', 'a whole number above 0', (n: number) => Number.isInteger(n) && n > 0],
    ['concurrency', 'a whole number above 0', (n: number) => Number.isInteger(n) && n > 0],
    ['seed', 'a whole number', Number.isInteger],
    ['min-coverage', 'a number from 0 to 100', (n: number) => n >= 0 && n <= 100],
  ] as const) {
    const given = a[option];
    if (given !== undefined && (given.trim() === '' || !holds(Number(given))))
      stop(`--${option} takes ${rule}, not '${String(given)}'`);
  }
  for (const option of ['timeout', 'deadline', 'max-answer-bytes'] as const) {
    if (a[option] !== undefined && !(Number(a[option]) > 0))
      stop(`--${option} takes a number above 0, not '${String(a[option])}'`);
  }
  const started = performance.now();
  const client = boundedClient({
    timeoutMs: Number(a.timeout ?? DEFAULT_RUN_LIMITS.timeoutSeconds) * 1000,
    maxBytes: Number(a['max-answer-bytes'] ?? DEFAULT_RUN_LIMITS.maxAnswerBytes),
    deadline: Date.now() + Number(a.deadline ?? DEFAULT_RUN_LIMITS.deadlineSeconds) * 1000,
  });
  const wires = [...protocols.all.map((p) => p.id), 'both'];
  if (!wires.includes(a.wire)) stop(`--wire takes ${wires.slice(0, -1).join(', ')} or both, not '${a.wire}'`);
  let target: URL;
  try {
    target = new URL(base);
    if (!/^https?:$/.test(target.protocol)) throw new Error('not http');
  } catch {
    stop(`--base-url '${base}' is not an http(s) URL (for example http://127.0.0.1:4010)`);
  }
  // One line when nothing answers there, not a failure for every check.
  await boundedClient({ timeoutMs: Math.min(5_000, client.limits.timeoutMs), giveUpAfter: 1 })
    .fetch(new URL('/openapi.json', target!))
    .catch((error: Error) =>
      stop(
        `nothing answers at ${base} (${error.message}): start the implementation first, or give its address with --base-url`,
      ),
    );
  const coverage = new Coverage();
  const results = await runContract({
    client,
    base,
    creds,
    mock: a.mock,
    coverage,
    maskSecrets: a['mask-secrets'],
    wire: a.wire as Wire | 'both',
    allowUnreached: a['allow-unreached'],
    log: (line) => console.log(logSafeLines(line)),
    ...(list(a.only) ? { only: list(a.only)! } : {}),
    ...(list(a.skip) ? { skip: list(a.skip)! } : {}),
    ...(a.runs ? { runs: Number(a.runs) } : {}),
    ...(a.seed ? { seed: Number(a.seed) } : {}),
    ...(a.concurrency ? { concurrency: Number(a.concurrency) } : {}),
  }).catch((error: unknown) =>
    // A server that never answered the credentials' first requests: there is nothing to report but why.
    error instanceof CredentialsRefused || error instanceof ExchangeFailed
      ? stop(error.message)
      : Promise.reject(error),
  );
  const seconds = (performance.now() - started) / 1000;
  if (client.gaveUp) {
    // The run stopped (a server that stopped answering, the deadline): the reports keep every check,
    // the console says why in one line.
    await writeReports(
      results,
      { junit: a.junit, json: a.json },
      { base, mock: a.mock, seconds, stopped: client.gaveUp },
    );
    console.error(
      `payment-gateway-contract-test: stopped after ${seconds.toFixed(1)} s: ${logSafe(client.gaveUp)} (reports: ${a.junit}, ${a.json})`,
    );
    process.exit(1);
  }
  console.log(`${a.mock ? 'mock' : 'implementation'} at ${base}\n`);
  const selected = [...new Set(results.map((r) => r.operationId))];
  console.log(summary(results, seconds, { quiet: a.quiet }));
  if (!a.quiet) console.log(`\n${coverageSummary(coverage, selected)}`);
  const percent = coverage.percent(selected);
  await writeReports(
    results,
    { junit: a.junit, json: a.json },
    {
      base,
      mock: a.mock,
      seconds,
      coverage: { percent, operations: coverage.table(selected), cards: coverage.cardsUsed() },
    },
  );
  console.log(`\nreports: ${a.junit} (JUnit), ${a.json} (JSON, with the coverage table); coverage ${percent} %`);
  const bar =
    a['min-coverage'] !== undefined ? Number(a['min-coverage']) : a.mock || onlyChecks ? 0 : DEFAULT_MIN_COVERAGE;
  const tooLow = percent < bar;
  if (tooLow)
    console.log(
      `coverage ${percent} % is below ${a['min-coverage'] !== undefined ? '--min-coverage' : 'the default bar'} ${bar} % (a lower bar only with --min-coverage)`,
    );
  process.exitCode = results.some((r) => r.status === 'failed') || tooLow ? 1 : 0;
}

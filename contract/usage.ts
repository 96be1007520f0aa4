// The contract suite's program (contract/run.ts, payment-gateway-contract-test) as its arguments
// see it: its options, its usage, and the reading that answers --help, --version and a mistake without
// the suite. `payment-gateway contract` (cli/contract.ts) reads its arguments here too, so that those
// three are answered in its own process instead of starting the program's (a Node start each).
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

export const OPTIONS = {
  'base-url': { type: 'string' },
  'merchant-uuid': { type: 'string' },
  'api-key': { type: 'string' },
  passphrase: { type: 'string' },
  'partner-uuid': { type: 'string' },
  'partner-api-key': { type: 'string' },
  'partner-passphrase': { type: 'string' },
  mock: { type: 'boolean', default: false },
  wire: { type: 'string', default: 'both' },
  only: { type: 'string' },
  skip: { type: 'string' },
  runs: { type: 'string' },
  seed: { type: 'string' },
  junit: { type: 'string', default: 'test-results/contract.xml' },
  json: { type: 'string', default: 'test-results/contract.json' },
  concurrency: { type: 'string' },
  quiet: { type: 'boolean', default: false },
  'mask-secrets': { type: 'boolean', default: false },
  'min-coverage': { type: 'string' },
  'allow-unreached': { type: 'boolean', default: false },
  timeout: { type: 'string' },
  deadline: { type: 'string' },
  'max-answer-bytes': { type: 'string' },
} as const;

/** The usage, as contract/run.ts's header states it. */
export const USAGE = `Usage: payment-gateway-contract-test [--base-url URL] [options]

Holds an implementation of the gateway to the contract, operation by operation. Exit 1 on any failure.

  --base-url URL              the implementation (PGW_BASE_URL; default http://127.0.0.1:4010)
  --merchant-uuid, --api-key, --passphrase, --partner-uuid, --partner-api-key, --partner-passphrase
                              credentials (PGW_MERCHANT_UUID, PGW_API_KEY, PGW_PASSPHRASE, PGW_PARTNER_UUID,
                              PGW_PARTNER_API_KEY, PGW_PARTNER_PASSPHRASE; default: the spec's x-sandbox)
  --mock                      the target is the Prism mock: stateless checks only
  --wire both|json|form       the wire formats of the checks (default both, what the spec says the server
                              serves: every operation in JSON, and those of /post, /token, /partner,
                              /processCard and /payframe again form-encoded, their answers required in
                              XML); json or form narrows the run to one (docs/WIRE-FORMATS.md)
  --only / --skip LIST        operationIds, tags or check ids (a failure prints its own), comma-separated
  --runs N --seed S           property-based requests per operation (default 4) and their seed
  --junit FILE --json FILE    reports (default test-results/contract.xml, .json)
  --concurrency N             checks in flight at once (default 8)
  --quiet                     print failed operations and the totals only (the reports keep every check)
  --mask-secrets              print a failure's API key and access token as the PGW_* variables they come
                              from, its hash recomputed by payment-gateway sign (default: as sent)
  --min-coverage P            fail when the run reached less than P % of the documented answers
                              (default 90 against an implementation; the mock keeps no state and has none,
                              and neither has a run of named checks, as a failure's replay: line makes)
  --allow-unreached           an operation whose success answer the run could not reach is skipped, not
                              failed (by default the suite builds the state each one needs, and fails it)
  --timeout S                 seconds for one exchange, answer read whole (default 15)
  --deadline S                seconds for the whole run; nothing is sent after it (default 1800)
  --max-answer-bytes N        the most bytes of one answer read (default 16777216); redirects are never
                              followed, and after 3 exchanges in a row without an answer the run stops
  -h, --help                  print this help
  -V, --version               print the version`;

/** The program's options, read as given; with --help, --version or a mistake, what to print and the exit code instead. */
export function readArguments(
  args: string[],
): { values: ReturnType<typeof read>['values'] } | { exitCode: 0 | 2; out?: string; err?: string } {
  let parsed: ReturnType<typeof read>;
  try {
    parsed = read(args);
  } catch (error) {
    return { exitCode: 2, err: `payment-gateway-contract-test: ${(error as Error).message} (see --help)` };
  }
  if (parsed.values.help) return { exitCode: 0, out: USAGE };
  if (parsed.values.version)
    return { exitCode: 0, out: createRequire(import.meta.url)('payment-gateway-contract/package.json').version };
  return { values: parsed.values };
}

const read = (args: string[]) =>
  parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'V' }, ...OPTIONS },
  });

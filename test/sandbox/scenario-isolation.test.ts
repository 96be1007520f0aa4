// Fifty CI jobs at once on one account, each with its own scenario (an outcome, a fault, both, or
// none): each sees only its own, in its answer and in what the sandbox stored for it (its lookup). The
// control API's forced outcome, one per account, is what they would have shared: one job, whichever
// came first, takes it (the reason the docs send CI to the header).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { scenarios } from '../../generated/scenarios.ts';
import { createControlClient } from '../../sandbox/control-client.ts';
import { startSandbox, type TestSandbox } from './support.ts';

let t: TestSandbox;
beforeAll(async () => {
  t = await startSandbox({ control: true });
});
afterAll(() => t.close());

const JOBS = 50;
const HEADER = scenarios.header;
const cardOutcomes = scenarios.operations.processCard.outcomes;
/** Each job's scenario: every card outcome, the faults that end the request at once, two together, and none. */
const PLAN = [
  ...cardOutcomes.map((o) => o.name as string),
  'answerLost',
  'resetAfterCommit',
  'resetBeforeCommit',
  'truncated',
  'unavailable=2',
  'internalError',
  'latency=300',
  'insufficientFunds,answerLost',
  '',
];

/** What a job expects: the code its answer carries (or the connection's end), and the code stored for it. */
function expected(scenario: string): { answer: string; stored: string | undefined } {
  const [first, second] = scenario.split(',');
  const outcome = cardOutcomes.find((o) => o.name === first);
  const fault = outcome ? second : first;
  const code = String(outcome?.responseCode ?? 0);
  switch (fault?.split('=')[0]) {
    case 'answerLost':
    case 'resetAfterCommit':
    case 'truncated':
      return { answer: 'no answer', stored: code };
    case 'resetBeforeCommit':
      return { answer: 'no answer', stored: undefined };
    case 'unavailable':
      return { answer: '503 -4', stored: undefined };
    case 'internalError':
      return { answer: '200 -4', stored: undefined };
    default:
      return { answer: `200 ${code}`, stored: code };
  }
}

async function job(n: number, scenario: string) {
  const reference = `JOB-${n}`;
  const r = buildRequest(operation('processCard'), {
    body: { ...requestExamples(operation('processCard'))[0]!.value, transactionReferenceID: reference },
    signBody: true,
    ...(scenario ? { headers: { [HEADER]: scenario } } : {}),
  });
  let answer: string;
  try {
    const response = await fetch(t.base + r.url, {
      method: 'POST',
      headers: r.headers as never,
      body: r.body as string,
      signal: AbortSignal.timeout(30_000),
    });
    answer = `${response.status} ${(JSON.parse(await response.text()) as { responseCode: string }).responseCode}`;
  } catch {
    answer = 'no answer';
  }
  // The job's own lookup, with no scenario: what the sandbox stored for it.
  const found = (await t.client.queryCard({ transactionReferenceID: reference })) as Record<string, string>;
  return { scenario, answer, stored: found.responseCode === '0' ? found.transactionResponseCode : undefined };
}

describe('fifty jobs in parallel on one account', () => {
  it('each with its own scenario sees only its own, in its answer and in what was stored for it', async () => {
    const plan = Array.from({ length: JOBS }, (_, n) => PLAN[n % PLAN.length]!);
    const seen = await Promise.all(plan.map((scenario, n) => job(n, scenario)));
    const wrong = seen.filter((s) => {
      const e = expected(s.scenario);
      return s.answer !== e.answer || s.stored !== e.stored;
    });
    expect(wrong.map((w) => ({ ...w, expected: expected(w.scenario) }))).toEqual([]);
    expect(new Set(plan).size).toBe(PLAN.length);
  });

  it("the control API's forced outcome, by contrast, is the account's: exactly one of fifty jobs takes it, whichever", async () => {
    const control = createControlClient({
      baseUrl: t.base,
      accountId: t.sandbox.seed.merchantUUID,
      apiKey: t.sandbox.seed.apiKey,
    });
    await control.forceNextOutcome({ operationId: 'processCard', outcome: 'expired' });
    const seen = await Promise.all(Array.from({ length: JOBS }, (_, n) => job(100 + n, '')));
    expect(seen.filter((s) => s.answer === '200 4')).toHaveLength(1);
    expect(seen.filter((s) => s.answer === '200 0')).toHaveLength(JOBS - 1);
  });
});

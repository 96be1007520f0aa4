// Coverage you can count: every documented answer of every operation (docs/SCENARIOS.md: each outcome
// of its set, or its one outcome; each refusal it documents) reached on the sandbox through the trigger
// the docs name for it: the header with the outcome's name, the same name in a form client's base URL
// (/_scenario/NAME/, form-encoded, answered in XML), and for the refusals a wrong credential, a field
// of the wrong type, a required field left out, the scenario internalError. The figure is printed
// with the table and must be 100 %.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation } from '../../contract/index.ts';
import { protocols } from '../../generated/protocols.ts';
import { bodyCredentials, type OperationId } from '../../generated/operations.ts';
import { scenarios } from '../../generated/scenarios.ts';
import { isOutcome, type ScenarioOutcome } from '../../runtime/scenarios.ts';
import { subjectRequest, subjects } from '../support/subjects.ts';
import { merchantControl, startSandbox, type TestSandbox } from './support.ts';

let t: TestSandbox;
let subjectOf: ReturnType<typeof subjects>;
beforeAll(async () => {
  t = await startSandbox({ control: true });
  subjectOf = subjects(t.client, merchantControl(t));
});
afterAll(() => t.close());

const HEADER = scenarios.header;
const ops = Object.keys(scenarios.operations) as OperationId[];

/** Sends a built request, to the base URL with a path in front when given; its answer as fields. */
async function send(request: ReturnType<typeof subjectRequest>, prefix = '') {
  const response = await fetch(`${t.base}${prefix}${request.url}`, {
    method: request.verb,
    headers: request.headers as Record<string, string>,
    ...(request.body === undefined ? {} : { body: request.body as string }),
  });
  const type = response.headers.get('content-type') ?? '';
  const text = await response.text();
  // An answer of any protocol read as its clients read it; a file answer is its type.
  const read = protocols.answeredIn(type)?.readAnswer(text);
  const answer = read
    ? (('ok' in read ? read.ok : undefined) ?? { unreadable: text })
    : { file: type, status: response.status };
  return answer as Record<string, unknown>;
}

const reached = (answer: Record<string, unknown>, o: ScenarioOutcome) =>
  o.file ? answer.status === 200 && typeof answer.file === 'string' : isOutcome(answer, o);

/** The request of each refusal's trigger, from a request the sandbox would process. */
function broken(id: OperationId, base: Awaited<ReturnType<(typeof subjectOf)[OperationId]>>, refusal: string) {
  const op = operation(id);
  const body = base.body as Record<string, unknown> | undefined;
  switch (refusal) {
    case 'credentials': {
      if (op.headers) return subjectRequest(id, base, { [op.headers.apiKey!]: 'wrongkey' });
      const key = body && 'apiKey' in body ? 'apiKey' : 'accessToken';
      // Signed over the right key: only the credential is wrong (a wrong hash is the request log's test).
      return subjectRequest(id, {
        ...base,
        body: { ...body, [key]: key === 'apiKey' ? 'wrongkey' : 'at00000000000000' },
      });
    }
    case 'invalidField': {
      const field = requiredOf(id, body!)[0] ?? fieldsOf(id, body!)[0]!;
      const value = body![field];
      // Not signed: the field is refused before any hash is read (and a hash cannot decode a broken batch file).
      return buildRequest(op, { ...base, body: { ...body, [field]: typeof value === 'string' ? 12345 : 'x' } });
    }
    case 'missingField': {
      // A required field left out; where the body needs one of several (queryCard: an id or a
      // reference), all of them.
      const required = requiredOf(id, body!);
      const dropped = new Set(required.length ? [required[0]!] : fieldsOf(id, body!));
      return subjectRequest(id, {
        ...base,
        body: Object.fromEntries(Object.entries(body!).filter(([k]) => !dropped.has(k))),
      });
    }
    default:
      return subjectRequest(id, base, { [HEADER]: refusal });
  }
}

/** The body's fields that are neither the method nor one of its credentials nor a hash. */
function fieldsOf(id: OperationId, body: Record<string, unknown>): string[] {
  const op = operation(id);
  const own = new Set([
    'method',
    ...op.credentials.flatMap((kind) =>
      Object.values(bodyCredentials[kind]).filter((f) => f !== 'merchant' && f !== 'partner'),
    ),
    ...op.hashes.map((h) => h.name),
  ]);
  return Object.keys(body).filter((k) => !own.has(k));
}

/** Of those, the ones its form requires. */
function requiredOf(id: OperationId, body: Record<string, unknown>): string[] {
  const forms = operation(id).requestForms ?? [];
  const form = forms.find((f) => f.required.every((r) => r in body)) ?? forms[0]!;
  const fields = new Set(fieldsOf(id, body));
  return form.required.filter((r) => fields.has(r));
}

const CODES: Record<string, number> = Object.fromEntries(
  Object.entries(scenarios.refusals).map(([name, r]) => [name, r.responseCode]),
);

describe('every documented answer of every operation, through its documented trigger', () => {
  const rows: { id: string; documented: number; reached: number; missed: string[] }[] = [];

  for (const id of ops)
    it(id, async () => {
      const entry = scenarios.operations[id];
      const form = operation(id).protocols.includes('form');
      const missed: string[] = [];
      for (const outcome of entry.outcomes as readonly ScenarioOutcome[]) {
        const base = await subjectOf[id]();
        if (!reached(await send(subjectRequest(id, base, { [HEADER]: outcome.name })), outcome))
          missed.push(`${outcome.name} (header)`);
        // The form clients' way: the same name in the base URL, the request form-encoded.
        if (form) {
          const again = await subjectOf[id]();
          const request = subjectRequest(id, { ...again, wire: 'form' });
          if (!reached(await send(request, `${scenarios.pathPrefix}/${outcome.name}`), outcome))
            missed.push(`${outcome.name} (base URL)`);
        }
      }
      for (const refusal of entry.refusals) {
        const answer = await send(broken(id, await subjectOf[id](), refusal));
        if (Number(answer.responseCode) !== CODES[refusal])
          missed.push(`${refusal} (${JSON.stringify(answer).slice(0, 120)})`);
      }
      rows.push({
        id,
        documented: entry.outcomes.length + entry.refusals.length,
        reached: entry.outcomes.length + entry.refusals.length - new Set(missed.map((m) => m.split(' ')[0])).size,
        missed,
      });
      expect(missed).toEqual([]);
    });

  afterAll(() => {
    const documented = rows.reduce((n, r) => n + r.documented, 0);
    const got = rows.reduce((n, r) => n + r.reached, 0);
    const lines = rows.map(
      (r) =>
        `  ${r.id.padEnd(32)} ${String(r.reached).padStart(2)}/${r.documented}${r.missed.length ? `  missed ${r.missed.join(', ')}` : ''}`,
    );
    console.log(
      `documented answers reached (outcomes and refusals, reached / documented):\n${lines.join('\n')}\n  overall ${got}/${documented} = ${documented ? Math.round((got / documented) * 1000) / 10 : 0} % over ${rows.length} operations`,
    );
  });
});

// The Python sample of an operation (Python 3's standard library: urllib, hashlib, hmac, json).
import type { RequestPlan, SamplePlan } from './plan.ts';
import {
  buildsPath,
  calls,
  indexPath,
  concat,
  literal,
  opening,
  pathParts,
  preimage,
  requestLines,
  snake,
  type Syntax,
  type Vars,
  type VectorCase,
} from './syntax.ts';

const str = (s: string) => JSON.stringify(s);
const words = {
  true: 'True',
  false: 'False',
  null: 'None',
  open: '{',
  close: '}',
  list: ['[', ']'] as [string, string],
  pair: (k: string, v: string) => `${k}: ${v}`,
  str,
};

const syntax = (passphrase: string): Syntax => ({
  field: (body, name, text) => (text ? `${body}[${str(name)}]` : `str(${body}[${str(name)}])`),
  md5: (e) => `md5(${e})`,
  lower: (e) => `${e}.lower()`,
  concat: (es) => (es.length === 1 ? es[0]! : `(${es.join(' + ')})`),
  passphrase,
});

const HELPERS = `def md5(text):
    return hashlib.md5(text.encode("utf-8")).hexdigest()`;

/** The statements that build one request's body, sign it and send it; the answer in the answer variable. */
function request(plan: RequestPlan, vars: Vars, varsOf: (step: number) => Vars): string[] {
  const { body, answer } = vars;
  const params = buildsPath(plan) ? 'params' : literal(plan.params, words);
  const path = buildsPath(plan)
    ? pathParts(plan, str, (n) => `urllib.parse.quote(params[${str(n)}], safe="")`).join(' + ')
    : str(plan.path);
  return requestLines(plan, {
    comment: '#',
    params: `params = ${literal(plan.params, words)}`,
    body: `${body} = ${plan.body ? literal(plan.body, words) : 'None'}`,
    take: (t) =>
      `${t.into === 'path' ? 'params' : body}[${str(t.name)}] = ${t.source === 'request' ? varsOf(t.step).body : `json.loads(${varsOf(t.step).answer})`}${indexPath(t.from, str)}`,
    bodyHash: (h) =>
      h.code.kind === 'file'
        ? `${body}[${str(h.name)}] = hashlib.md5(base64.b64decode(${body}[${str(h.code.field)}])).hexdigest()`
        : `${body}[${str(h.name)}] = md5(${preimage(concat(h), syntax('PASSPHRASE'), body)})`,
    headers: `headers = ${literal(Object.fromEntries(plan.headers.map((h) => [h.name, h.value])), words)}`,
    headerHash: (h) => [
      `signed = {**${params}, **(${body} or {})}`,
      `canonical = json.dumps(signed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`,
      `headers[${str(h.name)}] = hmac.new(PASSPHRASE.encode("utf-8"), canonical.encode("utf-8"), hashlib.sha256).hexdigest()`,
    ],
    send: `${answer} = send(${str(plan.verb)}, ${path}, headers, ${body})`,
  });
}

export function pythonSample(plan: SamplePlan): string {
  const file = `${plan.operationId}.py`;
  const lines = [
    ...opening(plan, `python3 ${file}`).map((l) => `# ${l}`),
    'import base64, hashlib, hmac, json, os, sys, urllib.error, urllib.parse, urllib.request',
    '',
    `BASE_URL = os.environ.get(${str(plan.baseUrlVariable)}) or ${str(plan.defaultBaseUrl)}`,
    `PASSPHRASE = ${str(plan.passphrase)}  # the account's passphrase: hashed, never sent`,
    '',
    '',
    HELPERS,
    '',
    '',
    'def send(verb, path, headers, body):',
    '    data = None if body is None else json.dumps(body).encode("utf-8")',
    '    if data is not None:',
    `        headers = {**headers, "Content-Type": "${plan.contentType}"}`,
    '    request = urllib.request.Request(BASE_URL + path, data=data, headers=headers, method=verb)',
    '    try:',
    '        with urllib.request.urlopen(request) as answer:',
    '            return answer.read()',
    '    except urllib.error.HTTPError as refused:  # the gateway answers refusals with a body too',
    '        return refused.read()',
    '',
    '',
  ];
  lines.push(
    ...calls(plan, {
      comment: '#',
      vars: (id) =>
        id ? { body: `${snake(id)}_body`, answer: `${snake(id)}_answer` } : { body: 'body', answer: 'answer' },
      request,
      write: (comment) => `sys.stdout.buffer.write(answer)  # ${comment}`,
      blankAfterStep: ['', ''],
    }),
  );
  return `${lines.join('\n')}\n`;
}

/** A program printing, for each case, its preimage and hash, tab-separated, one line each. */
export function pythonVectors(cases: VectorCase[]): string {
  const lines = ['import hashlib', '', HELPERS, ''];
  for (const c of cases) {
    lines.push(`passphrase = ${str(c.passphrase)}`, `body = ${literal(c.inputs, words)}`);
    lines.push(
      `preimage = ${preimage(c.code, syntax('passphrase'), 'body')}`,
      'print(preimage + "\\t" + md5(preimage))',
    );
  }
  return `${lines.join('\n')}\n`;
}

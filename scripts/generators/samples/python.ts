// The Python sample of an operation (Python 3's standard library: urllib, hashlib, hmac, json).
import type { RequestPlan, SamplePlan } from './plan.ts';
import { hashComment, hashesOf, literal, opening, preimage, type Syntax, type VectorCase } from './syntax.ts';

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

/** The statements that build one request's body, sign it and send it; the answer in \`answer\`. */
function request(plan: RequestPlan, body: string, answer: string): string[] {
  const lines: string[] = [];
  const hashes = hashesOf(plan);
  lines.push(`${body} = ${plan.body ? literal(plan.body, words) : 'None'}`);
  for (const h of hashes.body) {
    lines.push(`# ${hashComment(h)}`);
    if (h.code.kind === 'file')
      lines.push(`${body}[${str(h.name)}] = hashlib.md5(base64.b64decode(${body}[${str(h.code.field)}])).hexdigest()`);
    else if (h.code.kind === 'concat')
      lines.push(`${body}[${str(h.name)}] = md5(${preimage(h.code, syntax('PASSPHRASE'), body)})`);
  }
  lines.push(`headers = ${literal(Object.fromEntries(plan.headers.map((h) => [h.name, h.value])), words)}`);
  if (hashes.header) {
    lines.push(
      `# ${hashComment(hashes.header)}`,
      `signed = {**${literal(plan.params, words)}, **(${body} or {})}`,
      `canonical = json.dumps(signed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`,
      `headers[${str(hashes.header.name)}] = hmac.new(PASSPHRASE.encode("utf-8"), canonical.encode("utf-8"), hashlib.sha256).hexdigest()`,
    );
  }
  lines.push(`${answer} = send(${str(plan.verb)}, ${str(plan.path)}, headers, ${body})`);
  return lines;
}

export function pythonSample(plan: SamplePlan): string {
  const file = `${plan.operationId}.py`;
  const lines = [
    ...opening(plan, `python3 ${file}`).map((l) => `# ${l}`),
    'import base64, hashlib, hmac, json, os, sys, urllib.error, urllib.request',
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
    '        headers = {**headers, "Content-Type": "application/json"}',
    '    request = urllib.request.Request(BASE_URL + path, data=data, headers=headers, method=verb)',
    '    try:',
    '        with urllib.request.urlopen(request) as answer:',
    '            return answer.read()',
    '    except urllib.error.HTTPError as refused:  # the gateway answers refusals with a body too',
    '        return refused.read()',
    '',
    '',
  ];
  if (plan.token) {
    lines.push(`# First an access token (${plan.token.request.operationId}), which the call below spends.`);
    lines.push(...request(plan.token.request, 'token_body', 'token_answer'));
    lines.push('', '');
  }
  const main = request(plan, 'body', 'answer');
  if (plan.token)
    main.splice(1, 0, `body[${str(plan.token.field)}] = json.loads(token_answer)[${str(plan.token.field)}]`);
  lines.push(...main);
  lines.push(
    plan.fileAnswer
      ? 'sys.stdout.buffer.write(answer)  # the file itself, or a JSON refusal'
      : 'sys.stdout.buffer.write(answer)  # JSON: responseCode 0 or above when processed, below 0 when refused',
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

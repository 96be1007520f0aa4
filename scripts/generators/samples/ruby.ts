// The Ruby sample of an operation (Ruby's standard library: net/http, json, digest, openssl).
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
  singleQuoted,
  snake,
  type Syntax,
  type Vars,
  type VectorCase,
} from './syntax.ts';

const str = singleQuoted;
const words = {
  true: 'true',
  false: 'false',
  null: 'nil',
  open: '{',
  close: '}',
  list: ['[', ']'] as [string, string],
  pair: (k: string, v: string) => `${k} => ${v}`,
  str,
};

const syntax = (passphrase: string): Syntax => ({
  field: (body, name, text) => (text ? `${body}[${str(name)}]` : `${body}[${str(name)}].to_s`),
  md5: (e) => `md5(${e})`,
  lower: (e) => `${e}.downcase`,
  concat: (es) => (es.length === 1 ? es[0]! : `(${es.join(' + ')})`),
  passphrase,
});

const HELPERS = `def md5(text)
  Digest::MD5.hexdigest(text)
end`;

function request(plan: RequestPlan, vars: Vars, varsOf: (step: number) => Vars): string[] {
  const { body, answer } = vars;
  const params = buildsPath(plan) ? 'params' : literal(plan.params, words);
  const path = buildsPath(plan)
    ? pathParts(plan, str, (n) => `URI.encode_www_form_component(params[${str(n)}])`).join(' + ')
    : str(plan.path);
  return requestLines(plan, {
    comment: '#',
    params: `params = ${literal(plan.params, words)}`,
    body: `${body} = ${plan.body ? literal(plan.body, words) : 'nil'}`,
    take: (t) =>
      `${t.into === 'path' ? 'params' : body}[${str(t.name)}] = ${t.source === 'request' ? varsOf(t.step).body : `JSON.parse(${varsOf(t.step).answer})`}${indexPath(t.from, str)}`,
    bodyHash: (h) =>
      h.code.kind === 'file'
        ? `${body}[${str(h.name)}] = md5(${body}[${str(h.code.field)}].unpack1('m'))`
        : `${body}[${str(h.name)}] = md5(${preimage(concat(h), syntax('PASSPHRASE'), body)})`,
    headers: `headers = ${literal(Object.fromEntries(plan.headers.map((h) => [h.name, h.value])), words)}`,
    headerHash: (h) => [
      `signed = ${params}.merge(${body} || {})`,
      `headers[${str(h.name)}] = OpenSSL::HMAC.hexdigest('SHA256', PASSPHRASE, JSON.generate(sorted(signed)))`,
    ],
    send: `${answer} = send_request(${str(plan.verb)}, ${path}, headers, ${body})`,
  });
}

const SORTED = `# Every object's keys sorted, at every depth: JSON.generate of it is the canonical JSON the hash signs.
def sorted(value)
  case value
  when Hash then value.sort.to_h { |key, member| [key, sorted(member)] }
  when Array then value.map { |member| sorted(member) }
  else value
  end
end`;

export function rubySample(plan: SamplePlan): string {
  const signsHeader = [plan, ...plan.steps].some((r) => r.hashes.some((h) => h.in === 'header'));
  const lines = [
    ...opening(plan, `ruby ${plan.operationId}.rb`).map((l) => `# ${l}`),
    "require 'digest/md5'",
    "require 'json'",
    "require 'net/http'",
    ...(signsHeader ? ["require 'openssl'"] : []),
    '',
    `BASE_URL = ENV.fetch(${str(plan.baseUrlVariable)}, '').empty? ? ${str(plan.defaultBaseUrl)} : ENV[${str(plan.baseUrlVariable)}]`,
    `PASSPHRASE = ${str(plan.passphrase)} # the account's passphrase: hashed, never sent`,
    '',
    HELPERS,
    '',
    ...(signsHeader ? [SORTED, ''] : []),
    'def send_request(verb, path, headers, body)',
    '  uri = URI(BASE_URL + path)',
    `  headers = headers.merge('Content-Type' => '${plan.contentType}') if body`,
    '  Net::HTTP.start(uri.host, uri.port) do |http|',
    '    http.send_request(verb, uri.request_uri, body && JSON.generate(body), headers).body',
    '  end',
    'end',
    '',
  ];
  lines.push(
    ...calls(plan, {
      comment: '#',
      vars: (id) =>
        id ? { body: `${snake(id)}_body`, answer: `${snake(id)}_answer` } : { body: 'body', answer: 'answer' },
      request,
      write: (comment) => `${plan.fileAnswer ? '$stdout.binmode' : '$stdout'}.write(answer) # ${comment}`,
      blankAfterStep: [''],
    }),
  );
  return `${lines.join('\n')}\n`;
}

export function rubyVectors(cases: VectorCase[]): string {
  const lines = ["require 'digest/md5'", '', HELPERS, ''];
  for (const c of cases) {
    lines.push(`passphrase = ${str(c.passphrase)}`, `body = ${literal(c.inputs, words)}`);
    lines.push(`preimage = ${preimage(c.code, syntax('passphrase'), 'body')}`, 'puts "#{preimage}\\t#{md5(preimage)}"');
  }
  return `${lines.join('\n')}\n`;
}

// The Ruby sample of an operation (Ruby's standard library: net/http, json, digest, openssl).
import type { RequestPlan, SamplePlan } from './plan.ts';
import { calls, concat, literal, opening, preimage, requestLines, type Syntax, type VectorCase } from './syntax.ts';

const str = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
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

function request(plan: RequestPlan, body: string, answer: string): string[] {
  return requestLines(plan, {
    comment: '#',
    body: `${body} = ${plan.body ? literal(plan.body, words) : 'nil'}`,
    bodyHash: (h) =>
      h.code.kind === 'file'
        ? `${body}[${str(h.name)}] = md5(${body}[${str(h.code.field)}].unpack1('m'))`
        : `${body}[${str(h.name)}] = md5(${preimage(concat(h), syntax('PASSPHRASE'), body)})`,
    headers: `headers = ${literal(Object.fromEntries(plan.headers.map((h) => [h.name, h.value])), words)}`,
    headerHash: (h) => [
      `signed = ${literal(plan.params, words)}.merge(${body} || {})`,
      `headers[${str(h.name)}] = OpenSSL::HMAC.hexdigest('SHA256', PASSPHRASE, JSON.generate(sorted(signed)))`,
    ],
    send: `${answer} = send_request(${str(plan.verb)}, ${str(plan.path)}, headers, ${body})`,
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
  const signsHeader = plan.hashes.some((h) => h.in === 'header');
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
    "  headers = headers.merge('Content-Type' => 'application/json') if body",
    '  Net::HTTP.start(uri.host, uri.port) do |http|',
    '    http.send_request(verb, uri.request_uri, body && JSON.generate(body), headers).body',
    '  end',
    'end',
    '',
  ];
  lines.push(
    ...calls(plan, {
      comment: '#',
      request,
      takeToken: (field) => [`body[${str(field)}] = JSON.parse(token_answer)[${str(field)}]`],
      write: (comment) => `${plan.fileAnswer ? '$stdout.binmode' : '$stdout'}.write(answer) # ${comment}`,
      blankAfterToken: [''],
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

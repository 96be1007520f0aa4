// The PHP sample of an operation (PHP's core: http streams, md5, hash_hmac, json_encode; no extension).
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
  type Syntax,
  type Vars,
  type VectorCase,
} from './syntax.ts';

const str = singleQuoted;
const words = {
  true: 'true',
  false: 'false',
  null: 'null',
  open: '[',
  close: ']',
  list: ['[', ']'] as [string, string],
  pair: (k: string, v: string) => `${k} => ${v}`,
  str,
};

const syntax = (passphrase: string): Syntax => ({
  field: (body, name, text) => (text ? `${body}[${str(name)}]` : `(string) ${body}[${str(name)}]`),
  md5: (e) => `md5(${e})`,
  lower: (e) => `strtolower(${e})`,
  concat: (es) => es.join(' . '),
  passphrase,
});

const JSON_FLAGS = 'JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE';

function request(plan: RequestPlan, vars: Vars, varsOf: (step: number) => Vars): string[] {
  const { body, answer } = vars;
  const params = buildsPath(plan) ? '$params' : literal(plan.params, words);
  const path = buildsPath(plan)
    ? pathParts(plan, str, (n) => `rawurlencode($params[${str(n)}])`).join(' . ')
    : str(plan.path);
  return requestLines(plan, {
    comment: '//',
    params: `$params = ${literal(plan.params, words)};`,
    body: `${body} = ${plan.body ? literal(plan.body, words) : 'null'};`,
    take: (t) =>
      `${t.into === 'path' ? '$params' : body}[${str(t.name)}] = ${t.source === 'request' ? varsOf(t.step).body : `json_decode(${varsOf(t.step).answer}, true)`}${indexPath(t.from, str)};`,
    bodyHash: (h) =>
      h.code.kind === 'file'
        ? `${body}[${str(h.name)}] = md5(base64_decode(${body}[${str(h.code.field)}]));`
        : `${body}[${str(h.name)}] = md5(${preimage(concat(h), syntax('$passphrase'), body)});`,
    headers: `$headers = ${literal(Object.fromEntries(plan.headers.map((h) => [h.name, h.value])), words)};`,
    headerHash: (h) => [
      `$signed = array_merge(${params}, ${body} ?? []);`,
      `$headers[${str(h.name)}] = hash_hmac('sha256', $canonicalJson((object) $signed), $passphrase);`,
    ],
    send: `${answer} = $send(${str(plan.verb)}, ${path}, $headers, ${body});`,
  });
}

// Closures, not functions: a sample declares no global name (so that the test runs them all in one php).
const CANONICAL = `// JSON with every object's keys sorted and no white space: what the message hash signs (an object: (object) [] is {}).
$canonicalJson = function ($value) use (&$canonicalJson) {
    $object = is_object($value) || (is_array($value) && !array_is_list($value));
    if (!$object && !is_array($value)) {
        return json_encode($value, ${JSON_FLAGS});
    }
    $value = (array) $value;
    if (!$object) {
        return '[' . implode(',', array_map($canonicalJson, $value)) . ']';
    }
    ksort($value, SORT_STRING);
    $members = [];
    foreach ($value as $key => $member) {
        $members[] = json_encode((string) $key, ${JSON_FLAGS}) . ':' . $canonicalJson($member);
    }
    return '{' . implode(',', $members) . '}';
};
`;

export function phpSample(plan: SamplePlan): string {
  const signsHeader = [plan, ...plan.steps].some((r) => r.hashes.some((h) => h.in === 'header'));
  const lines = [
    '<?php',
    ...opening(plan, `php ${plan.operationId}.php`).map((l) => `// ${l}`),
    '',
    `$baseUrl = getenv(${str(plan.baseUrlVariable)}) ?: ${str(plan.defaultBaseUrl)};`,
    `$passphrase = ${str(plan.passphrase)}; // the account's passphrase: hashed, never sent`,
    '',
    '$send = function ($verb, $path, $headers, $body) use ($baseUrl) {',
    "    $http = ['method' => $verb, 'ignore_errors' => true]; // a refusal's body is the answer too",
    '    if ($body !== null) {',
    `        $http['content'] = json_encode($body, ${JSON_FLAGS});`,
    `        $headers['Content-Type'] = '${plan.contentType}';`,
    '    }',
    '    $http[\'header\'] = implode("\\r\\n", array_map(fn ($name, $value) => "$name: $value", array_keys($headers), $headers));',
    "    return file_get_contents($baseUrl . $path, false, stream_context_create(['http' => $http]));",
    '};',
    '',
    ...(signsHeader ? [CANONICAL] : []),
  ];
  lines.push(
    ...calls(plan, {
      comment: '//',
      vars: (id) => (id ? { body: `$${id}Body`, answer: `$${id}Answer` } : { body: '$body', answer: '$answer' }),
      request,
      write: (comment) => `echo $answer; // ${comment}`,
      blankAfterStep: [''],
    }),
  );
  return `${lines.join('\n')}\n`;
}

export function phpVectors(cases: VectorCase[]): string {
  const lines = ['<?php'];
  for (const c of cases) {
    lines.push(`$passphrase = ${str(c.passphrase)};`, `$body = ${literal(c.inputs, words)};`);
    lines.push(
      `$preimage = ${preimage(c.code, syntax('$passphrase'), '$body')};`,
      'echo $preimage . "\\t" . md5($preimage) . "\\n";',
    );
  }
  return `${lines.join('\n')}\n`;
}

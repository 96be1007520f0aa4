// The C# sample of an operation (the .NET Framework's base library as Mono has it: HttpWebRequest,
// MD5, HMACSHA256; it has no JSON library, so the sample writes its JSON itself). Compiled with mcs.
import type { RequestPlan, SamplePlan } from './plan.ts';
import {
  buildsPath,
  calls,
  concat,
  opening,
  pathParts,
  preimage,
  requestLines,
  type Syntax,
  type Vars,
  type VectorCase,
} from './syntax.ts';

const str = (s: string) => JSON.stringify(s);
const DICT = 'Dictionary<string, object>';

/** A JSON value as C#: objects as Dictionary<string, object>, arrays as object[]. */
function literal(value: unknown, indent = ''): string {
  const inner = `${indent}    `;
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : `${value}d`;
  if (typeof value === 'string') return str(value);
  if (Array.isArray(value))
    return value.length
      ? `new object[]\n${indent}{\n${value.map((v) => `${inner}${literal(v, inner)}`).join(',\n')},\n${indent}}`
      : 'new object[0]';
  const entries = Object.entries(value as Record<string, unknown>);
  if (!entries.length) return `new ${DICT}()`;
  return `new ${DICT}\n${indent}{\n${entries.map(([k, v]) => `${inner}[${str(k)}] = ${literal(v, inner)}`).join(',\n')},\n${indent}}`;
}

const syntax = (passphrase: string): Syntax => ({
  field: (body, name, text) =>
    text ? `((string)${body}[${str(name)}])` : `Convert.ToString(${body}[${str(name)}], CultureInfo.InvariantCulture)`,
  md5: (e) => `Md5(${e})`,
  lower: (e) => `${e}.ToLowerInvariant()`,
  concat: (es) => (es.length === 1 ? es[0]! : `(${es.join(' + ')})`),
  passphrase,
});

/** C# names a class in PascalCase: processCard's is ProcessCardSample. */
export const csharpClass = (operationId: string) => `${operationId[0]!.toUpperCase()}${operationId.slice(1)}Sample`;

const USINGS = [
  'System',
  'System.Collections.Generic',
  'System.Globalization',
  'System.IO',
  'System.Linq',
  'System.Net',
  'System.Security.Cryptography',
  'System.Text',
  'System.Text.RegularExpressions',
];

const MD5 = `    static string Md5(string text)
    {
        using (var md5 = MD5.Create()) return Hex(md5.ComputeHash(Encoding.UTF8.GetBytes(text)));
    }

    static string Hex(byte[] bytes) => string.Concat(bytes.Select(b => b.ToString("x2")));`;

/** The helpers every sample carries; `contentType`: the media type its bodies are sent as. */
const helpers = (contentType: string) => `${MD5}

    /** JSON with every object's keys sorted (ordinal) and no white space: the body sent, and what a message hash signs. */
    static string Json(object value)
    {
        if (value == null) return "null";
        if (value is bool) return (bool)value ? "true" : "false";
        var s = value as string;
        if (s != null)
        {
            var text = new StringBuilder("\\"");
            foreach (var c in s)
            {
                if (c == '"' || c == '\\\\') text.Append('\\\\').Append(c);
                else if (c == '\\n') text.Append("\\\\n");
                else if (c == '\\r') text.Append("\\\\r");
                else if (c == '\\t') text.Append("\\\\t");
                else if (c < ' ') text.Append("\\\\u").Append(((int)c).ToString("x4"));
                else text.Append(c);
            }
            return text.Append('"').ToString();
        }
        var members = value as IDictionary<string, object>;
        if (members != null)
            return "{" + string.Join(",", members.OrderBy(m => m.Key, StringComparer.Ordinal).Select(m => Json(m.Key) + ":" + Json(m.Value))) + "}";
        var items = value as object[];
        if (items != null) return "[" + string.Join(",", items.Select(Json)) + "]";
        var number = value as IFormattable;
        if (number != null) return number.ToString(null, CultureInfo.InvariantCulture);
        throw new ArgumentException("not a JSON value: " + value);
    }

    static byte[] Send(string verb, string path, Dictionary<string, string> headers, ${DICT} body)
    {
        var request = (HttpWebRequest)WebRequest.Create(BaseUrl + path);
        request.Method = verb;
        foreach (var header in headers) request.Headers[header.Key] = header.Value;
        if (body != null)
        {
            request.ContentType = "${contentType}";
            var bytes = Encoding.UTF8.GetBytes(Json(body));
            using (var stream = request.GetRequestStream()) stream.Write(bytes, 0, bytes.Length);
        }
        HttpWebResponse response;
        try { response = (HttpWebResponse)request.GetResponse(); }
        catch (WebException refused) when (refused.Response != null) { response = (HttpWebResponse)refused.Response; } // a refusal's body is the answer too
        using (response)
        using (var stream = response.GetResponseStream())
        using (var copy = new MemoryStream())
        {
            stream.CopyTo(copy);
            return copy.ToArray();
        }
    }`;

function request(plan: RequestPlan, vars: Vars, varsOf: (step: number) => Vars): string[] {
  const { body, answer } = vars;
  // C# lets no two requests of one Main share a local's name: a step's are processAuthHeaders, processAuthSigned.
  const prefix = body.replace(/Body$/, '');
  const local = (name: string) => (body === 'body' ? name : `${prefix}${name[0]!.toUpperCase()}${name.slice(1)}`);
  const headersVar = local('headers');
  const signedVar = local('signed');
  const paramsVar = local('pathParams');
  const headers = plan.headers.map((h) => `    [${str(h.name)}] = ${str(h.value)},`);
  const params = Object.entries(plan.params).map(([k, v]) => `    [${str(k)}] = ${str(v)},`);
  const paramsLiteral = `new ${DICT}${params.length ? `\n{\n${params.join('\n')}\n}` : '()'}`;
  const path = buildsPath(plan)
    ? pathParts(plan, str, (n) => `Uri.EscapeDataString((string)${paramsVar}[${str(n)}])`).join(' + ')
    : str(plan.path);
  return requestLines(plan, {
    comment: '//',
    params: `var ${paramsVar} = ${paramsLiteral};`,
    body: `var ${body} = ${plan.body ? literal(plan.body) : `(${DICT})null`};`,
    take: (t) =>
      `${t.into === 'path' ? paramsVar : body}[${str(t.name)}] = ${t.source === 'request' ? `(string)${varsOf(t.step).body}[${str(String(t.from[0]))}]` : `Field(${varsOf(t.step).answer}, ${t.from.map((k) => str(String(k))).join(', ')})`};`,
    bodyHash: (h) =>
      h.code.kind === 'file'
        ? `${body}[${str(h.name)}] = Hex(MD5.Create().ComputeHash(Convert.FromBase64String((string)${body}[${str(h.code.field)}])));`
        : `${body}[${str(h.name)}] = Md5(${preimage(concat(h), syntax('Passphrase'), body)});`,
    headers: `var ${headersVar} = new Dictionary<string, string>\n{\n${headers.join('\n')}\n};`,
    headerHash: (h) => [
      `var ${signedVar} = ${buildsPath(plan) ? `new ${DICT}(${paramsVar})` : paramsLiteral};`,
      `if (${body} != null) foreach (var field in ${body}) ${signedVar}[field.Key] = field.Value;`,
      'using (var hmac = new HMACSHA256(Encoding.UTF8.GetBytes(Passphrase)))',
      `    ${headersVar}[${str(h.name)}] = Hex(hmac.ComputeHash(Encoding.UTF8.GetBytes(Json(${signedVar}))));`,
    ],
    send: `var ${answer} = Send(${str(plan.verb)}, ${path}, ${headersVar}, ${body});`,
  });
}

/**
 * A text field of a JSON answer, found by its path's last name (the base library has no JSON
 * reader; the ids a sample takes are plain strings, named once in the answer).
 */
const FIELD = `    static string Field(byte[] answer, params string[] path)
    {
        var name = Regex.Escape(path[path.Length - 1]);
        return Regex.Match(Encoding.UTF8.GetString(answer), "\\"" + name + "\\"\\\\s*:\\\\s*\\"([^\\"]*)\\"").Groups[1].Value;
    }`;

const indented = (lines: string[], by: string) => lines.flatMap((l) => l.split('\n')).map((l) => (l ? `${by}${l}` : l));

/** A class with a Main: its members (fields, helpers) and Main's statements. */
function program(name: string, members: string[], main: string[]): string[] {
  return [
    ...USINGS.map((u) => `using ${u};`),
    '',
    `class ${name}`,
    '{',
    ...members,
    '',
    '    static void Main()',
    '    {',
    ...indented(main, '        '),
    '    }',
    '}',
  ];
}

export function csharpSample(plan: SamplePlan): string {
  const main = calls(plan, {
    comment: '//',
    vars: (id) => (id ? { body: `${id}Body`, answer: `${id}Answer` } : { body: 'body', answer: 'answer' }),
    request,
    write: (comment) =>
      `using (var stdout = Console.OpenStandardOutput()) stdout.Write(answer, 0, answer.Length); // ${comment}`,
    blankAfterStep: [''],
  });
  const members = [
    `    static readonly string BaseUrl = string.IsNullOrEmpty(Environment.GetEnvironmentVariable(${str(plan.baseUrlVariable)})) ? ${str(plan.defaultBaseUrl)} : Environment.GetEnvironmentVariable(${str(plan.baseUrlVariable)});`,
    `    const string Passphrase = ${str(plan.passphrase)}; // the account's passphrase: hashed, never sent`,
    '',
    helpers(plan.contentType),
    ...([plan, ...plan.steps].some((r) => r.takes.some((t) => t.source === 'answer')) ? ['', FIELD] : []),
  ];
  const lines = [
    ...opening(plan, `mcs ${plan.operationId}.cs && mono ${plan.operationId}.exe`).map((l) => `// ${l}`),
    ...program(csharpClass(plan.operationId), members, main),
  ];
  return `${lines.join('\n')}\n`;
}

export function csharpVectors(cases: VectorCase[]): string {
  const main = cases.flatMap((c, i) => [
    `var passphrase${i} = ${str(c.passphrase)};`,
    `var body${i} = ${literal(c.inputs)};`,
    `var preimage${i} = ${preimage(c.code, syntax(`passphrase${i}`), `body${i}`)};`,
    `Console.WriteLine(preimage${i} + "\\t" + Md5(preimage${i}));`,
  ]);
  return `${program('HashVectors', [MD5], main).join('\n')}\n`;
}

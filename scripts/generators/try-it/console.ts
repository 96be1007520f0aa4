// The try-it console, run in the docs page (bundled by esbuild into generated/docs/index.html, see
// page.ts): on each operation's page a panel that fills the operation's example, lets the reader edit
// the body, the parameters, the credentials and the sandbox's address, signs the request in the
// browser with the runtime's own signer (runtime/sign-request.ts, the typed client's), sends it, and
// shows what was sent, each hash's preimage, the answer, and a refusal's field and rule.
import { readRefusal } from '../../../runtime/refusal-text.ts';
import { signRequest } from '../../../runtime/sign-request.ts';
import type { SigningAccount } from '../../../runtime/signing.ts';
import { SANDBOX_META } from '../../../runtime/try-it-page.ts';
import type { TryItData, TryItOperation } from './data.ts';
import { whenRedrawn } from './redrawn.ts';
import { requestLogPanel, scenarioPicker } from './scenario-panel.ts';

export const DATA_ELEMENT_ID = 'pgw-try-it-data';

/** The reader's settings, shared by every operation's console: edited in one, used by the next. */
type Settings = Record<'url' | 'merchantUUID' | 'partnerUUID' | 'apiKey' | 'passphrase', string>;

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string>> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) if (v !== undefined) el.setAttribute(k, v);
  el.append(...children);
  return el;
}

const pre = (testid: string, text: string) => element('pre', { 'data-testid': testid }, text);

/** A labelled input; `onInput` keeps its value where the console reads it (a shared setting, a parameter). */
function field(label: string, testid: string, value: string, onInput: (value: string) => void): HTMLLabelElement {
  const input = element('input', { 'data-testid': testid, spellcheck: 'false', value });
  input.addEventListener('input', () => onInput(input.value));
  return element('label', {}, element('span', {}, label), input);
}

/** Where the page keeps the sandbox URL the reader named, for the next visit. */
const URL_KEY = 'payment-gateway-contract/try-it/url';

function remembered(): string | undefined {
  try {
    return localStorage.getItem(URL_KEY) || undefined;
  } catch {
    return undefined; // storage refused (a private window's policy): the page still works, forgetting
  }
}

function remember(url: string): void {
  try {
    if (url.trim()) localStorage.setItem(URL_KEY, url.trim());
    else localStorage.removeItem(URL_KEY);
  } catch {}
}

/**
 * Where a request goes: the sandbox the reader named last (remembered), else the one the server of
 * this page names (`payment-gateway docs --sandbox`), else the page's own origin when a sandbox serves
 * these docs itself (/docs), else (opened from disk) the spec's server.
 */
function defaultUrl(data: TryItData): string {
  const named = document.querySelector<HTMLMetaElement>(`meta[name="${SANDBOX_META}"]`)?.content;
  return remembered() ?? (named || (/^https?:$/.test(location.protocol) ? location.origin : data.defaultUrl));
}

/** How this page is opened, in the words the console's messages use. */
const pageOrigin = () => (location.protocol === 'file:' ? 'null: the docs opened from disk' : location.origin);

/**
 * Why nothing was read from `base`: nothing answers there, or something does but does not let this
 * page read its answers (a sandbox that does not allow the page's origin). A request the page cannot
 * read (no-cors) still tells the two apart: it fails only when nothing answers.
 */
async function unreachable(base: string, error: Error, data: TryItData): Promise<string> {
  const answers = await fetch(base, { mode: 'no-cors', cache: 'no-store' }).then(
    () => true,
    () => false,
  );
  if (!answers)
    return `No sandbox answers at ${base} (${error.message}). Start one (npm start, or payment-gateway sandbox: ${data.defaultUrl} by default) or give the address of a running one above.`;
  return `Could not read an answer from ${base}: something answers there but does not allow this page's origin (${pageOrigin()}). If it is the sandbox, allow the origin: see PGW_SANDBOX_ALLOWED_ORIGINS in docs/DEPLOY.md.`;
}

const VERDICTS = {
  approved: 'Approved (responseCode 0)',
  declined: (code: number) => `Processed, declined or pending (responseCode ${code})`,
  refused: (code: number) => `Refused (responseCode ${code}): nothing was processed`,
};

function showAnswer(
  out: HTMLElement,
  status: number,
  type: string,
  text: string,
  answerType: string,
  where: { base: string; usual: string },
): void {
  let answer: { responseCode?: unknown; responseMessage?: unknown } | undefined;
  if (type.startsWith(answerType)) {
    try {
      answer = JSON.parse(text);
    } catch {}
  }
  out.append(element('h5', {}, `Answer: HTTP ${status}, ${type || 'no content type'}`));
  // Every answer of a sandbox to a request it reads carries a responseCode; a 4xx or 5xx without one
  // comes from some other server (the docs' own, a proxy): said, not shown as if it were an answer.
  if (status >= 400 && !(answer && 'responseCode' in answer))
    out.append(
      element(
        'p',
        { 'data-testid': 'try-it-error', class: 'refused' },
        `${where.base} answered HTTP ${status} without a gateway answer: it is not a sandbox (the docs' own server answers so). Give the sandbox's address above (npm start runs one at ${where.usual}).`,
      ),
    );
  if (!answer || !('responseCode' in answer)) {
    out.append(pre('try-it-answer', type.startsWith('text/') || answer ? text : `${text.length} bytes`));
    return;
  }
  const code = Number(answer.responseCode);
  const verdict = code === 0 ? VERDICTS.approved : code > 0 ? VERDICTS.declined(code) : VERDICTS.refused(code);
  out.append(element('p', { 'data-testid': 'try-it-verdict', class: code < 0 ? 'refused' : 'processed' }, verdict));
  if (code < 0) {
    const reading = readRefusal(String(answer.responseMessage ?? ''));
    out.append(
      element(
        'dl',
        { class: 'refusal' },
        element('dt', {}, reading.kind ?? 'Field'),
        element('dd', { 'data-testid': 'try-it-field' }, reading.field ?? '(none: the request as a whole)'),
        element('dt', {}, 'Rule'),
        element('dd', { 'data-testid': 'try-it-rule' }, reading.rule),
      ),
    );
  }
  out.append(pre('try-it-answer', JSON.stringify(answer, null, 2)));
}

async function send(op: TryItOperation, data: TryItData, settings: Settings, inputs: Inputs, out: HTMLElement) {
  out.replaceChildren();
  const fail = (message: string) =>
    out.append(element('p', { 'data-testid': 'try-it-error', class: 'refused' }, message));
  let body: Record<string, unknown> | undefined;
  if (inputs.body) {
    try {
      body = JSON.parse(inputs.body.value || '{}');
    } catch (error) {
      return fail(`The body is not JSON: ${(error as Error).message}`);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return fail('The body must be a JSON object');
  }
  const account = (kind: string): SigningAccount => ({
    id: kind === 'partner' ? settings.partnerUUID : settings.merchantUUID,
    apiKey: settings.apiKey,
    passphrase: settings.passphrase,
  });
  const hashes: { name: string; preimage: string; hash: string }[] = [];
  // A query parameter left empty is not sent, so it is not signed either.
  const query = Object.fromEntries(Object.entries(inputs.query).filter(([, v]) => v !== ''));
  let signed: ReturnType<typeof signRequest>;
  try {
    signed = signRequest(op.call, data, account, { params: inputs.params, query, body }, (name, preimage, hash) =>
      hashes.push({ name, preimage, hash }),
    );
  } catch (error) {
    // A field a recipe decodes (a batch file's base64) that does not decode.
    return fail(`The request cannot be signed: ${(error as Error).message}`);
  }
  const path = op.call.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(inputs.params[name] ?? ''));
  const search = new URLSearchParams(query).toString();
  let url: string;
  try {
    url = new URL(`${path}${search ? `?${search}` : ''}`, settings.url).href;
  } catch {
    return fail(`The sandbox URL is not a URL: ${settings.url}`);
  }
  const headers: Record<string, string> = { ...signed.headers };
  if (signed.body) headers['content-type'] = data.requestType;
  const scenario = inputs.scenario?.();
  if (scenario) headers[data.scenarios.header] = scenario;
  const bodyText = signed.body ? JSON.stringify(signed.body) : undefined;
  // The answer first (it comes last), then what was hashed, then the request as sent.
  const answerBox = element('div', { class: 'answer' });
  const sentBody = bodyText
    ? [
        element(
          'details',
          {},
          element('summary', {}, 'Body sent'),
          pre('try-it-sent', JSON.stringify(signed.body, null, 2)),
        ),
      ]
    : [];
  out.append(
    answerBox,
    element('h5', {}, 'Hashes, as signed in this page'),
    ...(hashes.length ? [] : [element('p', {}, 'This operation takes no hash.')]),
    ...hashes.flatMap((h) => [
      element('p', {}, element('code', {}, h.name), ` = ${h.hash}, by the recipe ${recipeOf(op, h.name)} over:`),
      pre('try-it-preimage', h.preimage),
    ]),
    element('h5', {}, 'Request'),
    pre('try-it-request', `${op.call.verb} ${url}`),
    pre(
      'try-it-headers',
      Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n'),
    ),
    ...sentBody,
  );
  let response: Response;
  try {
    response = await fetch(url, { method: op.call.verb, headers, ...(bodyText ? { body: bodyText } : {}) });
  } catch (error) {
    const message = await unreachable(settings.url, error as Error, data);
    answerBox.append(element('p', { 'data-testid': 'try-it-error', class: 'refused' }, message));
    return;
  }
  showAnswer(
    answerBox,
    response.status,
    response.headers.get('content-type') ?? '',
    await response.text(),
    data.answerType,
    { base: settings.url, usual: data.defaultUrl },
  );
}

/** The recipe a hash of this operation is made by (its form's hash field, or the header message hash). */
function recipeOf(op: TryItOperation, name: string): string {
  if (op.call.headers?.messageHash === name) return op.call.headers.recipe ?? '';
  return op.call.forms?.flatMap((f) => f.hashes).find((h) => h.name === name)?.recipe ?? '';
}

interface Inputs {
  params: Record<string, string>;
  query: Record<string, string>;
  body?: HTMLTextAreaElement;
  /** The scenario to ask the sandbox for (scenario-panel.ts), '' for none. */
  scenario?: () => string;
}

/** The console of one operation: a closed <details> until the reader opens it. */
export function buildConsole(op: TryItOperation, data: TryItData, shared: Settings): HTMLElement {
  const inputs: Inputs = { params: {}, query: {} };
  // This console sends what its own inputs show; an edit is also the default of consoles opened later.
  const settings = { ...shared };
  const set = (key: keyof Settings) => (value: string) => {
    settings[key] = value;
    shared[key] = value;
    if (key === 'url') remember(value);
  };
  const credentials = [
    field('Sandbox URL', 'try-it-url', settings.url, set('url')),
    ...(op.accounts.includes('merchant')
      ? [field('merchantUUID', 'try-it-merchantUUID', settings.merchantUUID, set('merchantUUID'))]
      : []),
    ...(op.accounts.includes('partner')
      ? [field('partnerUUID', 'try-it-partnerUUID', settings.partnerUUID, set('partnerUUID'))]
      : []),
    ...(op.accounts.length
      ? [
          field('apiKey', 'try-it-apiKey', settings.apiKey, set('apiKey')),
          field(
            'passphrase (keys the hashes; never sent)',
            'try-it-passphrase',
            settings.passphrase,
            set('passphrase'),
          ),
        ]
      : []),
  ];
  const parameters = op.parameters.map((p) => {
    const values = p.in === 'path' ? inputs.params : inputs.query;
    values[p.name] = p.example;
    return field(`${p.name} (${p.in})`, `try-it-param-${p.name}`, p.example, (v) => {
      values[p.name] = v;
    });
  });
  const names = data.scenarios.byOperation[op.operationId];
  const picker = names && scenarioPicker(element, names);
  if (picker) inputs.scenario = picker.value;
  const parts: Node[] = [
    element('div', { class: 'fields' }, ...credentials, ...parameters, ...(picker ? [picker.element] : [])),
  ];
  if (op.call.forms) {
    inputs.body = element('textarea', { 'data-testid': 'try-it-body', spellcheck: 'false' });
    inputs.body.value = JSON.stringify(op.body ?? {}, null, 2);
    inputs.body.rows = Math.min(16, inputs.body.value.split('\n').length);
    const filled = [op.call.method ? 'method' : '', ...op.accounts.map((k) => `the ${k} credentials`), 'the hashes']
      .filter(Boolean)
      .join(', ');
    parts.push(
      element(
        'label',
        { class: 'body' },
        element('span', {}, `Body (JSON; ${filled} are filled in when sent)`),
        inputs.body,
      ),
    );
  }
  const out = element('div', { class: 'output', 'data-testid': 'try-it-output', 'aria-live': 'polite' });
  const button = element('button', { type: 'button', 'data-testid': 'try-it-send' }, 'Sign and send');
  button.addEventListener('click', () => {
    button.disabled = true;
    void send(op, data, settings, inputs, out).finally(() => {
      button.disabled = false;
    });
  });
  parts.push(button, out);
  if (op.accounts.length)
    parts.push(
      requestLogPanel(element, () => ({
        url: settings.url,
        id: op.accounts.includes('merchant') ? settings.merchantUUID : settings.partnerUUID,
        apiKey: settings.apiKey,
      })),
    );
  return element(
    'details',
    { class: 'pgw-try-it', 'data-operation': op.operationId },
    element('summary', {}, 'Try it: sign in this page and send to a sandbox'),
    ...parts,
  );
}

const STYLE = `
.pgw-try-it{margin:24px 0;padding:12px 16px;border:1px solid #c7d2e0;border-radius:6px;background:#f7f9fc;font-size:14px}
.pgw-try-it summary{cursor:pointer;font-weight:600}
.pgw-try-it .fields{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:8px;margin:12px 0}
.pgw-try-it label{display:flex;flex-direction:column;gap:2px}
.pgw-try-it label span{font-size:12px;color:#555}
.pgw-try-it input,.pgw-try-it textarea,.pgw-try-it select{font:12px monospace;padding:4px;border:1px solid #bbb;border-radius:3px}
.pgw-try-it textarea{width:100%;box-sizing:border-box}
.pgw-try-it button{margin:8px 0;padding:6px 14px;font-weight:600;cursor:pointer;color:#fff;background:#0044d4;border:0;border-radius:4px}
.pgw-try-it button:disabled{opacity:.6}
.pgw-try-it pre{white-space:pre-wrap;word-break:break-all;background:#fff;border:1px solid #ddd;padding:6px;font-size:12px;margin:4px 0}
.pgw-try-it h5{margin:10px 0 4px}
.pgw-try-it .processed{color:#1a7f37;font-weight:600}
.pgw-try-it .refused{color:#b3261e;font-weight:600}
.pgw-try-it dl.refusal{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:4px 0}
.pgw-try-it dl.refusal dt{font-weight:600}
.pgw-try-it dl.refusal dd{margin:0;font-family:monospace}
`;

/**
 * Puts each operation's console on its page as the docs render it: the docs draw a tag's pages when
 * the reader goes there (and may draw them again), so the console is added to each operation section
 * that appears, the same element each time, so that what the reader typed stays.
 */
export function start(): void {
  const source = document.getElementById(DATA_ELEMENT_ID);
  if (!source?.textContent) return;
  const data: TryItData = JSON.parse(source.textContent);
  const settings: Settings = { url: defaultUrl(data), ...data.sandbox };
  const byId = new Map(data.operations.map((op) => [op.operationId.toLowerCase(), op]));
  const consoles = new Map<string, HTMLElement>();
  document.head.append(element('style', {}, STYLE));
  const attach = () => {
    for (const section of Array.from(document.querySelectorAll<HTMLElement>('[data-item-kind="httpItem"]'))) {
      const op = byId.get(section.id.split('/').pop() ?? '');
      const panel = section.querySelector('[data-testid="middle-panel"]');
      if (!op || !panel) continue;
      let console_ = consoles.get(op.operationId);
      if (console_?.parentElement === panel) continue;
      console_ ??= buildConsole(op, data, settings);
      consoles.set(op.operationId, console_);
      panel.append(console_);
    }
  };
  whenRedrawn(attach);
}

// The try-it console's panel for testing error handling (an addition to console.ts): a scenario to ask
// the sandbox for (x-sandbox-scenarios: the operation's outcomes, internalError, the faults), sent in
// the scenario header; and the reader's own request log (GET /_sandbox/requests, with the account's id
// and api key), each request with its outcome and, for a refusal, why: the check, the field, a hash's
// recipe and the text it was computed over, the passphrase a placeholder.

export interface TryItScenarios {
  /** The header the scenario goes in. */
  header: string;
  /** What each operation may ask for, by operationId. */
  byOperation: Record<string, string[]>;
}

type Element = HTMLElement;
type Make = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Partial<Record<string, string>>,
  ...children: (Node | string)[]
) => HTMLElementTagNameMap[K];

/** The scenario picker of one operation's console; `value()` is what to send ('' for none). */
export function scenarioPicker(make: Make, names: readonly string[]): { element: Element; value(): string } {
  const select = make(
    'select',
    { 'data-testid': 'try-it-scenario' },
    make('option', { value: '' }, 'none: the sandbox as it is'),
    ...names.map((name) => make('option', { value: name }, name)),
  );
  return {
    element: make('label', {}, make('span', {}, 'Scenario (docs/SCENARIOS.md)'), select),
    value: () => select.value,
  };
}

interface Line {
  id: number;
  at: string;
  operation?: string;
  responseCode?: string;
  responseMessage?: string;
  outcome: string;
  errorCode?: string;
  scenario?: string;
  explanation?: Record<string, string>;
}

/** The reader's own request log, read on demand with the console's sandbox URL, account id and api key. */
export function requestLogPanel(make: Make, account: () => { url: string; id: string; apiKey: string }): Element {
  const out = make('div', { 'data-testid': 'try-it-log' });
  const button = make('button', { type: 'button', 'data-testid': 'try-it-log-read' }, 'Read my latest requests');
  button.addEventListener('click', () => {
    button.disabled = true;
    void read(make, account(), out).finally(() => {
      button.disabled = false;
    });
  });
  return make(
    'div',
    { class: 'pgw-try-it-log' },
    make('h5', {}, 'Your request log: why the sandbox refused a request'),
    button,
    out,
  );
}

async function read(make: Make, a: { url: string; id: string; apiKey: string }, out: Element): Promise<void> {
  out.replaceChildren();
  let lines: Line[];
  try {
    const response = await fetch(new URL('/_sandbox/requests?latest=10', a.url).href, {
      headers: { authorization: `Basic ${btoa(`${a.id}:${a.apiKey}`)}` },
    });
    const answer = (await response.json()) as { responseCode: number; responseMessage?: string; requests?: Line[] };
    if (answer.responseCode !== 0) throw new Error(answer.responseMessage ?? `HTTP ${response.status}`);
    lines = answer.requests ?? [];
  } catch (error) {
    out.append(
      make('p', { class: 'refused' }, `Could not read the log (${(error as Error).message}): is the control API on?`),
    );
    return;
  }
  if (!lines.length) out.append(make('p', {}, 'No requests yet.'));
  for (const l of lines.reverse()) {
    const e = l.explanation;
    const why = e
      ? [
          `check ${e.check}${e.field ? `, field ${e.field}` : ''}${e.rule ? `, rule ${e.rule}` : ''}`,
          ...(e.recipe ? [`recipe ${e.recipe}: ${e.formula ?? ''}`] : []),
          ...(e.preimage !== undefined ? [`computed over: ${e.preimage}${e.key ? ` (keyed by ${e.key})` : ''}`] : []),
        ]
      : [];
    out.append(
      make(
        'pre',
        { 'data-testid': 'try-it-log-line' },
        [
          `#${l.id} ${l.at} ${l.operation ?? '-'} ${l.responseCode ?? ''} ${l.outcome}${l.errorCode ? ` ${l.errorCode}` : ''}${l.scenario ? ` [scenario ${l.scenario}]` : ''}`,
          ...(l.outcome === 'refused' && l.responseMessage ? [l.responseMessage] : []),
          ...why,
        ].join('\n'),
      ),
    );
  }
}

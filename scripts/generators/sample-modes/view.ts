// The docs page's samples follow the wire format the reader picks (bundled into
// generated/docs/index.html by try-it/page.ts). Redocly shows an operation's x-codeSamples by
// language whatever media type is picked, and keeps one media type per operation for its request and
// its answer together (picking application/xml for the answer turns the request back to JSON, and
// the reverse). This view reads that pick as the mode: when the reader picks an added protocol's
// request type or its answer type (the form/XML mode's), it shows that mode's sample for the language
// picked in place of the spec's own one, and the mode's answer (the example picked, as the mode writes
// it) where Redocly would show the spec's own. It
// reads Redocly's rendered panels and sets only attributes and elements of its own.
import { whenRedrawn } from '../try-it/redrawn.ts';
import type { SampleModesData } from './data.ts';

export const MODES_ELEMENT_ID = 'pgw-sample-modes';

const REQUEST_TYPE = 'button[aria-label="Request media type"]';
const ANSWER_TYPE = 'button[aria-label="Response media type"]';
const EXAMPLE = 'button[aria-label="Example"]';
const CODE_BLOCK = '[data-component-name="CodeBlock/CodeBlock"]';
const HIDDEN = 'data-pgw-hidden';

const text = (element: Element | null | undefined) => element?.textContent?.trim() ?? '';

/** The language the reader picked: the last dropdown of the request panel's header (the first is the server). */
function pickedLanguage(panel: Element): string {
  const buttons = panel.querySelectorAll('[data-component-name="Panel/PanelHeader"] [data-testid="dropdown"] > button');
  return text(buttons[buttons.length - 1]);
}

/**
 * Shows `source` under `caption` in place of the panel's own code block (kept, hidden), or, with no
 * source, puts the panel's block back. `testid` names the element for the tests.
 */
function showInstead(panel: Element, testid: string, shown?: { caption: string; source: string; mode: string }) {
  const own = Array.from(panel.querySelectorAll<HTMLElement>(CODE_BLOCK)).find((b) => !b.closest('.pgw-mode-sample'));
  let ours = panel.querySelector<HTMLElement>(`[data-testid="${testid}"]`);
  if (!shown || !own) {
    ours?.remove();
    own?.removeAttribute(HIDDEN);
    return;
  }
  if (!ours) {
    ours = document.createElement('div');
    ours.className = 'pgw-mode-sample';
    ours.setAttribute('data-testid', testid);
    ours.append(document.createElement('p'), document.createElement('pre'));
  }
  // The panel's block is drawn again when the reader picks another language or example.
  if (ours.previousElementSibling !== own) own.after(ours);
  const [p, pre] = [ours.children[0]!, ours.children[1]!];
  if (p.textContent !== shown.caption) p.textContent = shown.caption;
  if (pre.textContent !== shown.source) pre.textContent = shown.source;
  if (ours.dataset.mode !== shown.mode) ours.dataset.mode = shown.mode;
  own.setAttribute(HIDDEN, '');
}

const STYLE = `
[${HIDDEN}]{display:none!important}
.pgw-mode-sample p{margin:4px 8px 6px;font-size:12px;color:#6a737d}
.pgw-mode-sample pre{margin:0;padding:12px 16px;white-space:pre-wrap;word-break:break-all;font:12px/1.5 monospace;color:#e6edf3;background:#1b1f24;border-radius:4px}
`;

export function start(): void {
  const source = document.getElementById(MODES_ELEMENT_ID);
  if (!source?.textContent) return;
  const data: SampleModesData = JSON.parse(source.textContent);
  const modes = data.modes.map((mode) => ({ mode, byId: new Map(mode.operations.map((op) => [op.id, op])) }));
  const style = document.createElement('style');
  style.textContent = STYLE;
  document.head.append(style);

  const sync = () => {
    for (const section of Array.from(document.querySelectorAll<HTMLElement>('[data-item-kind="httpItem"]'))) {
      const id = section.id.split('/').pop() ?? '';
      const request = section.querySelector('.panel-request-samples');
      const answer = section.querySelector('.panel-response-samples');
      if (!request) continue;
      const requestType = text(request.querySelector(REQUEST_TYPE));
      const answerType = text(answer?.querySelector(ANSWER_TYPE));
      // The mode the reader picked, by either media type, where the operation takes it.
      const picked = modes.find(
        ({ mode, byId }) => byId.has(id) && (requestType === mode.request || answerType === mode.answer),
      );
      const mode = picked?.mode;
      const op = picked?.byId.get(id);
      // The request's sample in the mode, for the language picked (the fallback's where it has none).
      const language = pickedLanguage(request);
      const own = op?.samples[language];
      showInstead(
        request,
        'mode-sample',
        mode && op
          ? {
              caption: own ? mode.caption : `${mode.missing.replace('{language}', language)} ${mode.caption}`,
              source: own ?? op.samples[mode.fallback]!,
              mode: mode.id,
            }
          : undefined,
      );
      // The answer in the mode: the example picked, as the mode writes it, unless Redocly shows it itself.
      const written =
        mode && op && answer && answerType !== mode.answer
          ? op.answers[text(answer.querySelector(EXAMPLE))]
          : undefined;
      if (answer)
        showInstead(
          answer,
          'mode-answer',
          written === undefined || !mode ? undefined : { caption: mode.answerCaption, source: written, mode: mode.id },
        );
    }
  };
  // Text changes too: a dropdown's label is redrawn in place when the reader picks another entry.
  whenRedrawn(sync, { childList: true, subtree: true, characterData: true });
}

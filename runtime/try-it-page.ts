// How a server of the docs page tells its try-it console where the sandbox is: a <meta> element the
// console reads (scripts/generators/try-it/console.ts). The sandbox serves the page itself (/docs)
// and needs none: the console then sends to the page's own origin. `payment-gateway docs` serves
// it from a server of its own, which is no sandbox: it names the sandbox with this.

/** The name of the <meta> element whose content is the sandbox's base URL. */
export const SANDBOX_META = 'pgw-try-it-sandbox';

const attribute = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The page with the sandbox its console sends to named in its head. */
export function withSandbox(html: string, sandboxUrl: string): string {
  const at = html.search(/<head[^>]*>/i);
  if (at < 0) throw new Error('The docs page has no <head>: the try-it console cannot be told where the sandbox is');
  const end = html.indexOf('>', at) + 1;
  return `${html.slice(0, end)}<meta name="${SANDBOX_META}" content="${attribute(sandboxUrl)}">${html.slice(end)}`;
}

// A block of generated text inside a page otherwise written by hand: the lines between
// `<!-- NAME -->` and `<!-- /NAME -->`. A generator (the bench's figures, the tools' matrix) rewrites
// it and a test compares it with what the generator would write now, so a stale block fails a test
// and the hand-written rest of the page is never touched.

const markers = (name: string) => [`<!-- ${name} -->`, `<!-- /${name} -->`] as const;

/** The block `name` as the page holds it now (trimmed), or undefined when the page has none. */
export function blockIn(page: string, name: string): string | undefined {
  const [open, close] = markers(name);
  const start = page.indexOf(open);
  const end = page.indexOf(close);
  return start < 0 || end < start ? undefined : page.slice(start + open.length, end).trim();
}

/** `page` with the block `name` replaced by `text`; throws naming `where` when the page has no such block. */
export function withBlock(page: string, name: string, text: string, where = 'the page'): string {
  const [open, close] = markers(name);
  const start = page.indexOf(open);
  const end = page.indexOf(close);
  if (start < 0 || end < start) throw new Error(`no ${open} … ${close} block in ${where}`);
  return `${page.slice(0, start + open.length)}\n${text}\n${page.slice(end)}`;
}

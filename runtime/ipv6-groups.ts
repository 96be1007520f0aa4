// An IPv6 address as its eight 16-bit groups: what the notification URL policy (sandbox/url-policy.ts)
// and the connection shares (server-stubs/http/clients.ts) both judge an address by.

/** An IPv6 address's eight 16-bit groups (a trailing dotted quad read as two), its zone dropped. The caller checks it is one. */
export function ipv6Groups(ip: string): number[] {
  let text = ip.replace(/%.*$/, '').toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::') as [string, string | undefined];
  const part = (s: string) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

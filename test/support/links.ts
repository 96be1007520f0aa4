// The links of Markdown files as a reader follows them: each relative link must reach a file beside
// it (and, with an #anchor, a heading of that file as GitHub and npm slug it). A web link (https:) is
// not followed here: tests reach the loopback only.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** The link targets of a Markdown text: [text](target), ![alt](target) and <a href>/<img src>, code left out. */
export function markdownLinks(text: string): string[] {
  const prose = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
  const links = [...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const html = [...prose.matchAll(/<(?:a|img)\s[^>]*?(?:href|src)="([^"]+)"/g)].map((m) => m[1]!);
  return [...links, ...html];
}

/** The anchors of a Markdown file's headings, as GitHub (and npm's page) make them. */
export function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const prose = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of prose.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

/** Every Markdown file under `root`, its dependencies' folders (node_modules) left out. */
export function markdownFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules') continue;
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith('.md')) out.push(full);
    }
  };
  walk(root);
  return out.sort();
}

export interface FollowedLink {
  from: string;
  target: string;
  /** Why it does not resolve; undefined when it does. */
  broken?: string;
}

/** Each link of each Markdown file under `root`, followed: where it leads, and why not when it does not. */
export function followLinks(root: string): FollowedLink[] {
  const out: FollowedLink[] = [];
  for (const file of markdownFiles(root)) {
    const from = path.relative(root, file);
    for (const target of markdownLinks(readFileSync(file, 'utf8'))) {
      if (/^(https?:|mailto:)/.test(target)) {
        out.push({ from, target });
        continue;
      }
      const [pathPart, anchor] = target.split('#') as [string, string | undefined];
      const resolved = pathPart ? path.resolve(path.dirname(file), decodeURI(pathPart)) : file;
      const link: FollowedLink = { from, target };
      if (!resolved.startsWith(`${root}${path.sep}`) && resolved !== root) link.broken = 'leads out of the package';
      else if (!existsSync(resolved)) link.broken = 'no such file';
      else if (anchor && resolved.endsWith('.md') && !headingAnchors(readFileSync(resolved, 'utf8')).has(anchor))
        link.broken = `no heading #${anchor}`;
      out.push(link);
    }
  }
  return out;
}

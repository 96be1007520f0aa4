// What test/architecture/wire-formats.test.ts checks: no file outside the protocol modules
// (runtime/protocols/) names a wire format. A format is named by its media types (x-wire-formats),
// its XML root, and the names its module exports beyond the protocol interface (readForm, writeXml,
// parseJson…); a file's code is read without its comments (a comment may say which format it means).
// The spec's own format is also that of other JSON interfaces the package serves, which are no wire
// format of the gateway's API: the files that serve one are listed below with it, and may name that
// format (and no other). Paths are taken from where this file is: a copy of the package
// checks itself by importing its own copy of this module (third-format.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);

/** Where the modules are: the one place a format may be named. */
export const PROTOCOLS = 'runtime/protocols/';

/** The folders whose code is held to the rule: every one the package ships, builds or runs but its tests. */
const FOLDERS = [
  'runtime',
  'server-stubs',
  'sandbox',
  'mock',
  'contract',
  'cli',
  'cli-kit',
  'notifications',
  'scripts',
  'bench',
  'lint',
  'examples',
];

/**
 * The files that serve another interface than the gateway's API, in JSON as their own: each may
 * name the spec's own format (its media type, its strict reader) for that interface, and no other.
 */
export const OTHER_JSON_INTERFACES: Readonly<Record<string, string>> = {
  'sandbox/control.ts': "the sandbox's control API (/_sandbox/…, its own OpenAPI document), JSON only",
  'sandbox/index.ts': "the sandbox's health probe (/_sandbox/health), for a load balancer",
  'sandbox/cors.ts': "a browser's CORS preflight (OPTIONS), no operation of the API",
  'sandbox/notifier.ts': 'the webhooks the sandbox sends (the spec’s webhooks, JSON)',
  'notifications/index.ts': 'the webhook receiver a merchant runs',
  'examples/hooks-app.ts':
    "a merchant's webhook receiver, and the list of what it applied (/effects) it serves for contract --notifications --effects",
  'cli/commands/check-notifications.ts': 'the webhooks, as the receiver checks them',
  'runtime/spec-files.ts': 'the spec document itself, served as a file (openapi.json)',
  'scripts/generators/try-it/page.ts': "the docs page's data island (<script type=application/json>)",
  'bench/servers/bare.ts': "the benchmark's bare node:http ceiling, no implementation of the API",
  'bench/servers/floor.ts': "the benchmark's floor: the contract's checks alone, answered as the spec's own format",
  'bench/servers/openapi-backend.ts': 'a peer library the benchmark measures, answering as it does',
  'scripts/tools/dredd.ts': 'a third-party tool driven over the spec (docs/TOOLS.md), configured in its own terms',
  'scripts/tools/portman.ts': 'a third-party tool driven over the spec (docs/TOOLS.md), configured in its own terms',
  'scripts/tools/scalar.ts': 'a third-party tool driven over the spec (docs/TOOLS.md), configured in its own terms',
  'scripts/tools/specmatic.ts': 'a third-party tool driven over the spec (docs/TOOLS.md), configured in its own terms',
};

interface Mark {
  /** The protocol it names. */
  protocol: string;
  text: string;
  /** A whole identifier (a codec's name), or text anywhere in the code (a media type, a root). */
  word: boolean;
}

/** Every mark of every wire format the spec declares: media types, the XML root, the modules' own exports. */
export function wireFormatMarks(): Mark[] {
  const doc = JSON.parse(readFileSync(path.join(ROOT, 'generated/openapi.json'), 'utf8'));
  const marks: Mark[] = [];
  const shared = new Set(['protocol', 'limits']);
  for (const [id, declaration] of Object.entries<Record<string, any>>(doc['x-wire-formats'])) {
    for (const type of new Set([declaration.request, declaration.answer]))
      marks.push({ protocol: id, text: type, word: false });
    if (typeof declaration.xml?.name === 'string') marks.push({ protocol: id, text: declaration.xml.name, word: true });
    const module = require(path.join(ROOT, PROTOCOLS, `${id}.ts`)) as Record<string, unknown>;
    for (const name of Object.keys(module).filter((n) => !shared.has(n)))
      marks.push({ protocol: id, text: name, word: true });
  }
  return marks;
}

function sourceFiles(): string[] {
  return FOLDERS.flatMap((folder) =>
    readdirSync(path.join(ROOT, folder), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && /\.(ts|js)$/.test(e.name) && !e.name.endsWith('.d.ts'))
      .filter((e) => !e.parentPath.split(path.sep).includes('node_modules'))
      .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name))),
  ).filter((file) => !file.startsWith(PROTOCOLS));
}

/** A file's code without its comments: each comment blanked, so that line numbers stay. */
function codeOf(text: string): string {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  let out = '';
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    const token = scanner.getTokenText();
    const comment = kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia;
    out += comment ? token.replace(/[^\n]/g, ' ') : token;
  }
  return out;
}

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Each place outside the protocol modules that names a wire format: `file:line names <mark> (<protocol>)`. */
export function namingProblems(marks = wireFormatMarks()): string[] {
  const own = Object.keys(
    JSON.parse(readFileSync(path.join(ROOT, 'generated/openapi.json'), 'utf8'))['x-wire-formats'],
  )[0];
  const problems: string[] = [];
  const patterns = marks.map((m) => ({
    ...m,
    pattern: new RegExp(m.word ? `(?<![\\w$])${literal(m.text)}(?![\\w$])` : literal(m.text), 'g'),
  }));
  for (const file of sourceFiles()) {
    const code = codeOf(readFileSync(path.join(ROOT, file), 'utf8'));
    for (const mark of patterns) {
      if (Object.hasOwn(OTHER_JSON_INTERFACES, file) && mark.protocol === own) continue;
      for (const m of code.matchAll(mark.pattern)) {
        const line = code.slice(0, m.index).split('\n').length;
        problems.push(`${file}:${line} names ${mark.text} (${mark.protocol})`);
      }
    }
  }
  return problems;
}

/** The listed files that no longer name the spec's own media type: the list only shrinks. */
export function listedButClean(): string[] {
  const own = JSON.parse(readFileSync(path.join(ROOT, 'generated/openapi.json'), 'utf8'))['x-wire-formats'];
  const ownType = Object.values<Record<string, any>>(own)[0]!.request;
  return Object.keys(OTHER_JSON_INTERFACES).filter(
    (file) => !codeOf(readFileSync(path.join(ROOT, file), 'utf8')).includes(ownType),
  );
}

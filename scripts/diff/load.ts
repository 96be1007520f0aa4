// Where the two documents of a diff come from: the working tree's spec/, a git ref (its spec/ and
// redocly.yaml extracted into a temporary folder and bundled the same way), a bundled document on
// disk, a packed package (.tgz, as `npm pack` writes it) or a published version (`npm:0.1.0`).
// Each answers the bundled document, the package version it was released as, and its refusal
// catalogue where that can be read (refusal-changes.ts).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import semver from 'semver';
import YAML from 'yaml';
import { withExactSchemas } from '../../runtime/exact-requests.ts';
import { bundleSpec } from '../generators/bundle.ts';
import type { Doc } from '../lib/contract.ts';
import { type Refusals, type RefusalSnapshot, refusalEntries } from './refusal-changes.ts';

const run = promisify(execFile);
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Loaded {
  /** What the user named: `working tree`, a ref, a file or `npm:<version>`. */
  label: string;
  doc: Doc;
  /** package.json's version at that point, when known. */
  version?: string;
  /** Its refusal catalogue: null where it had none, undefined where it could not be read. */
  refusals?: Refusals;
}

async function withTemp<T>(job: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-diff-'));
  try {
    return await job(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const git = async (args: string[]) => (await run('git', args, { cwd: ROOT, maxBuffer: 64 << 20 })).stdout;

async function fromGitRef(ref: string): Promise<Loaded> {
  const commit = (
    await git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]).catch(() => {
      throw new Error(
        `${ref} is neither a file nor a commit of this clone (a shallow clone? fetch its history and tags)`,
      );
    })
  ).trim();
  const pkg = JSON.parse(await git(['show', `${commit}:package.json`]));
  let bundled = bundledCommits.get(commit);
  if (!bundled) {
    bundled = withTemp(async (dir) => {
      // git archive writes the ref's own spec: the base is bundled by the same code as the revision.
      // Bundling needs no lint rules (whose plugins the archive would lack): a bare configuration.
      await run('sh', ['-c', `git archive ${commit} spec | tar -x -C "${dir}"`], { cwd: ROOT });
      await writeFile(path.join(dir, 'redocly.yaml'), 'apis:\n  gateway:\n    root: spec/openapi.yaml\n');
      const doc = await bundleSpec(dir);
      return { doc, refusals: refusalEntries(doc, dir, true) };
    });
    bundledCommits.set(commit, bundled);
  }
  const { doc, refusals } = await bundled;
  return { label: `${ref} (${commit.slice(0, 7)})`, doc, version: pkg.version, refusals };
}

/**
 * Each commit's spec, bundled once per process: `diff --base HEAD --revision HEAD` names one commit
 * twice, and bundling it took 1.3 s of CPU. The diff only reads the documents it compares.
 */
const bundledCommits = new Map<string, Promise<{ doc: Doc; refusals: Refusals }>>();

async function fromFile(file: string): Promise<Loaded> {
  const text = await readFile(file, 'utf8');
  const doc = file.endsWith('.json') ? JSON.parse(text) : YAML.parse(text);
  // A hand-written root (with $refs to other files) is bundled; a bundled document is read as is.
  // Absolute: the bundler composes the methods of a relative root '.' into nothing.
  const root = path.dirname(path.dirname(path.resolve(file)));
  const handWritten = text.includes("$ref: '../") || text.includes('$ref: paths/');
  const bundled = handWritten ? await bundleSpec(root) : doc;
  delete bundled['x-generated-by'];
  // A release snapshot (releases/openapi-X.Y.Z.json) names its package version, and may keep its
  // refusal catalogue beside it.
  const version = /(?:^|[/\\])openapi-(\d+\.\d+\.\d+[^/\\]*)\.json$/.exec(file)?.[1];
  const kept = version ? refusalSnapshot(version, path.dirname(file)) : undefined;
  const refusals = handWritten
    ? refusalEntries(bundled, root, true)
    : existsSync(kept ?? '')
      ? (JSON.parse(await readFile(kept!, 'utf8')) as RefusalSnapshot).refusals
      : undefined;
  // A published document keeps its exact request schemas at its root: compared as the bundle has them.
  return { label: file, doc: withExactSchemas(bundled), ...(version && { version }), refusals };
}

async function fromTarball(file: string, label = file): Promise<Loaded> {
  return withTemp(async (dir) => {
    await run('tar', ['-xzf', file, '-C', dir, 'package/generated/openapi.json', 'package/package.json']);
    // The package ships spec/: its catalogue, where the version has one (tar fails on a path it lacks).
    await run('tar', ['-xzf', file, '-C', dir, 'package/spec/refusals.yaml']).catch(() => undefined);
    const doc = JSON.parse(await readFile(path.join(dir, 'package/generated/openapi.json'), 'utf8'));
    delete doc['x-generated-by'];
    const pkg = JSON.parse(await readFile(path.join(dir, 'package/package.json'), 'utf8'));
    return {
      label,
      doc: withExactSchemas(doc),
      version: pkg.version,
      refusals: refusalEntries(doc, path.join(dir, 'package'), true),
    };
  });
}

async function fromRegistry(version: string): Promise<Loaded> {
  const name = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).name;
  return withTemp(async (dir) => {
    const { stdout } = await run('npm', ['pack', `${name}@${version}`, '--pack-destination', dir, '--json'], {
      cwd: dir,
    });
    const [packed] = JSON.parse(stdout);
    return fromTarball(path.join(dir, packed.filename), `npm:${name}@${version}`);
  });
}

export async function workingTree(): Promise<Loaded> {
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
  const doc = await bundleSpec(ROOT);
  return { label: 'working tree', doc, version: pkg.version, refusals: refusalEntries(doc, ROOT) };
}

/** Loads a base or revision as the user named it. */
export async function load(source: string | undefined): Promise<Loaded> {
  if (!source || source === 'WORKTREE') return workingTree();
  if (source.startsWith('npm:')) return fromRegistry(source.slice(4));
  if (source.endsWith('.tgz') && existsSync(source)) return fromTarball(source);
  if (/\.(json|ya?ml)$/.test(source) && existsSync(source)) return fromFile(source);
  return fromGitRef(source);
}

/** Where each release's bundled document is kept, written by `npm version` (release-changelog.ts). */
export const RELEASES = path.join(ROOT, 'releases');
export const releaseSnapshot = (version: string, dir = RELEASES) => path.join(dir, `openapi-${version}.json`);
/** Where a release keeps its refusal catalogue, beside its document (refusal-changes.ts). */
export const refusalSnapshot = (version: string, dir = RELEASES) => path.join(dir, `refusals-${version}.json`);

/**
 * The last release, the base the CI gate compares with: the newest snapshot in releases/ (the bundled
 * document `npm version` commits with each release), so the gate needs no git history: CI's shallow
 * clones and unpacked tarballs have none. Else the newest tag vX.Y.Z reachable from HEAD, or the
 * commit CHANGELOG.md records for its newest release (`<!-- release 0.1.0: <commit> -->`).
 */
export async function lastRelease(): Promise<string | undefined> {
  const snapshots = (await readdir(RELEASES).catch(() => [] as string[]))
    .map((name) => /^openapi-(\d+\.\d+\.\d+)\.json$/.exec(name)?.[1])
    .filter((version): version is string => version !== undefined)
    .sort(semver.compare);
  if (snapshots.length) return path.relative(process.cwd(), releaseSnapshot(snapshots.at(-1)!));
  try {
    await git(['rev-parse', '--git-dir']);
  } catch {
    return undefined;
  }
  try {
    const tag = (await git(['describe', '--tags', '--abbrev=0', '--match', 'v[0-9]*', 'HEAD'])).trim();
    if (tag) return tag;
  } catch {
    // no release tag yet
  }
  const changelog = await readFile(path.join(ROOT, 'CHANGELOG.md'), 'utf8').catch(() => '');
  return /<!-- release [0-9][^:]*: ([0-9a-f]{7,40}) -->/.exec(changelog)?.[1];
}

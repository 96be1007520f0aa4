// Package versions as npm's caret ranges read them, and the step a change of each class needs.
import semver from 'semver';
import type { Bump } from './change.ts';

/**
 * The bump a version change makes, read as npm's caret ranges read it: under 1.0.0 the left-most
 * non-zero part is the major one (^0.1.0 accepts 0.1.5 but not 0.2.0).
 */
export function versionStep(from: string, to: string): Bump | 'none' {
  if (!semver.gt(to, from)) return 'none';
  if (!semver.satisfies(to, `^${from}`)) return 'major';
  return semver.satisfies(to, `~${from}`) ? 'patch' : 'minor';
}

/** What `npm version` must be given for a change of this size from this version. */
export function npmVersionArgument(from: string, bump: Bump): Bump {
  const v = semver.parse(from)!;
  if (bump !== 'major') return bump;
  return v.major > 0 ? 'major' : v.minor > 0 ? 'minor' : 'patch';
}

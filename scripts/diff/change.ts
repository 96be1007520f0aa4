// One change between two versions of the contract, with its verdict for each side.
//
//   clients  a client written for the base can fail against a gateway that implements the revision:
//            what it sends is now refused, what it reads is gone or may now take values it does not
//            know, an operation it calls is gone, its credentials or hashes no longer pass.
//   servers  a server written for the base no longer conforms to the revision: it refuses what
//            clients may now send, answers what the revision forbids or lacks, or lacks an operation.
//
// The semver bump a change needs follows from that: breaking clients is major (they cannot choose
// when a gateway upgrades); a new obligation for servers, or anything added, is minor; the rest
// (descriptions, examples, provenance) is a patch.
export type Bump = 'major' | 'minor' | 'patch';

export interface Change {
  /** A short kind, stable for tests and the changelog: `request-field-required`, `operation-removed`… */
  kind: string;
  /** Which operations (methods on shared paths, webhooks by name) the change reaches. */
  operations: string[];
  /** Where in the bundled document (a JSON pointer), when one place says it. */
  pointer?: string;
  /** What the change is of, where that is outside the bundled document (a refusal's code). */
  subject?: string;
  message: string;
  clients: boolean;
  servers: boolean;
  bump: Bump;
  /** Redocly's own rating of the change (its `diff` command), when it came from there. */
  redocly?: Bump;
}

const ORDER: Bump[] = ['patch', 'minor', 'major'];
export const maxBump = (bumps: Bump[]): Bump =>
  bumps.reduce((a, b) => (ORDER.indexOf(b) > ORDER.indexOf(a) ? b : a), 'patch');

export function verdict(
  clients: boolean,
  servers: boolean,
  added = false,
): Pick<Change, 'clients' | 'servers' | 'bump'> {
  return { clients, servers, bump: clients ? 'major' : servers || added ? 'minor' : 'patch' };
}

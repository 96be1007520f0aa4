// The protocols of a contract together (generated/protocols.ts makes the set from x-wire-formats):
// which serve a path, and which one a request is in. The choice is the public service's: the body's
// Content-Type chooses; a request whose body type names none of the path's protocols (no body, an
// unknown type) is in the protocol whose mark it carries (the JSON mode's version header), else in
// the path's default one (the form/XML mode on its paths). Accept is never read (docs/WIRE-FORMATS.md).
import { charsetOf, mediaType, type Protocol } from './protocol.ts';

export interface Protocols {
  /** Every protocol, in x-wire-formats' order. */
  readonly all: readonly Protocol[];
  /** The spec's own (the first): the one its schemas and examples are written in, and Prism's. */
  readonly canonical: Protocol;
  byId(id: string): Protocol | undefined;
  /** The protocols that serve a path of the contract, in order. */
  servedAt(path: string): readonly Protocol[];
  /** The protocol a request is in; `served` undefined for a path no operation has (then only its Content-Type, else the canonical one). */
  choose(headers: Readonly<Record<string, string | undefined>>, served: readonly Protocol[] | undefined): Protocol;
  /** The media types a body may be sent as where these serve, as a refusal names them. */
  acceptedTypes(served: readonly Protocol[]): string;
  /**
   * Why no protocol took a Content-Type when its media type is one that serves here and only its
   * charset is wrong: the type, the charset it names (as sent, at most 40 characters) and the one the
   * protocol reads. Undefined otherwise.
   */
  wrongCharset(
    contentType: string | undefined,
    served: readonly Protocol[],
  ): { type: string; charset: string; reads: string } | undefined;
  /** The protocol that wrote an answer of this Content-Type, if one did. */
  answeredIn(contentType: string | undefined): Protocol | undefined;
}

export function protocolSet(all: readonly Protocol[]): Protocols {
  const canonical = all[0]!;
  const servedCache = new Map<string, readonly Protocol[]>();
  const accepted = new Map<readonly Protocol[], string>();
  return {
    all,
    canonical,
    byId: (id) => all.find((p) => p.id === id),
    servedAt(path) {
      let served = servedCache.get(path);
      if (!served) {
        served = all.filter((p) => p.paths === null || p.paths.includes(path));
        servedCache.set(path, served);
      }
      return served;
    },
    choose(headers, served) {
      const type = headers['content-type'];
      const pool = served ?? all;
      for (const p of pool) if (p.takes(type)) return p;
      if (!served) return canonical;
      if (served.length === 1) return served[0]!;
      for (const p of served) if (p.mark !== undefined && headers[p.mark] !== undefined) return p;
      for (const p of served) if (p.isDefault) return p;
      return served[0]!;
    },
    acceptedTypes(served) {
      let text = accepted.get(served);
      if (text === undefined) {
        text = [...new Set(served.map((p) => p.requestType))].join(' or ');
        accepted.set(served, text);
      }
      return text;
    },
    wrongCharset(contentType, served) {
      if (contentType === undefined) return undefined;
      const type = mediaType(contentType);
      const named = served.find((p) => p.requestType === type && p.charset !== undefined);
      const charset = named && charsetOf(contentType);
      return named && charset
        ? { type: named.requestType, charset: charset.slice(0, 40), reads: named.charset! }
        : undefined;
    },
    answeredIn(contentType) {
      if (contentType === undefined) return undefined;
      return all.find((p) => contentType === p.answerType || contentType.startsWith(`${p.answerType};`));
    },
  };
}

export type { Protocol, Shape, OperationShapes } from './protocol.ts';

// The wire format of a request and its answer (docs/WIRE-FORMATS.md): the JSON mode, or the form/XML
// mode of the paths that take it (x-wire-formats). The request's Content-Type chooses; Accept is not
// read. A transport concern only: handlers see the same typed body in either mode, and every answer
// is checked against its schema before it is written in the caller's mode.
import { writeXml } from '../../runtime/wire.ts';
import { apiVersion, formWire } from './contract.ts';
import type { GatewayRequest } from './types.ts';

export type Wire = 'json' | 'form';

/** The body's media type as sent: one of the two the gateway reads, none, or anything else (two at once included). */
export type BodyType = 'json' | 'form' | 'none' | 'other';

const FORM = formWire.request;
const versionHeader = apiVersion.name.toLowerCase();

export function bodyType(headers: GatewayRequest['headers']): BodyType {
  const value = headers['content-type'];
  if (value === undefined || value === '') return 'none';
  if (value === 'application/json') return 'json';
  if (value.includes(',')) return 'other';
  const semicolon = value.indexOf(';');
  const media = (semicolon < 0 ? value : value.slice(0, semicolon)).trim().toLowerCase();
  if (media === 'application/json') return 'json';
  if (media !== FORM) return 'other';
  // A form is read as UTF-8 (its percent-escapes are UTF-8 bytes); a charset that says otherwise is not served.
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(value)?.[1]?.toLowerCase();
  return charset === undefined || charset === 'utf-8' || charset === 'utf8' ? 'form' : 'other';
}

/**
 * The mode the caller used, in which its answer and any refusal are written. A form body is the
 * form mode and a JSON body the JSON mode; a request with neither (no body type, another one) is the
 * JSON mode when it carries the version header, the mark of a JSON-mode client, and the form mode
 * otherwise, the public service's default. Only on a path that takes the form mode (formPath); a
 * path of no operation answers in the form mode only a request that sent a form.
 */
export function wireOf(headers: GatewayRequest['headers'], formPath: boolean | undefined): Wire {
  const type = bodyType(headers);
  if (formPath === false) return 'json';
  if (type === 'form') return 'form';
  if (type === 'json' || formPath === undefined) return 'json';
  return headers[versionHeader] === undefined ? 'form' : 'json';
}

/** The media types a body may be sent as on a path: what the Content-Type refusal names. */
export const acceptedTypes = (formPath: boolean): string =>
  formPath ? `application/json or ${FORM}` : 'application/json';

/** An answer's fields as the form mode writes them. */
export const xmlAnswer = (body: Readonly<Record<string, unknown>>): string =>
  writeXml(body, formWire.root, formWire.declaration);

export const XML_TYPE = formWire.answer;

const XML_CODE = /<responseCode>(-?\d+)<\/responseCode>/;

/** The responseCode of an answer in either mode, for the request log. */
export function responseCodeOf(type: string | undefined, body: string): string | number | undefined {
  if (type?.startsWith('application/json')) {
    try {
      const code = (JSON.parse(body) as { responseCode?: unknown }).responseCode;
      return typeof code === 'string' || typeof code === 'number' ? code : undefined;
    } catch {
      return undefined;
    }
  }
  return type === XML_TYPE ? XML_CODE.exec(body)?.[1] : undefined;
}

// Node's HTTP parser refuses some requests before any handler runs (a control character in a header,
// a header name that is no name, conflicting body lengths, headers past the size it reads) and, left
// alone, answers them with a bare status line. Here they get the gateway's refusal: -2, naming the
// header where one is to blame, in the wire format the request's Content-Type names (what the parser
// had read of the request is all there is to go on), and the connection is closed.
import type { Duplex } from 'node:stream';
import type { Gateway } from '../core/gateway.ts';
import { NUL_RULE, type Refusal, refusals } from '../core/refusals.ts';
import { splitUrl } from '../core/request.ts';
import type { GatewayResponse } from '../core/types.ts';
import { http } from '../../runtime/node-http.ts';

/** What the parser's errors (llhttp's codes, one told apart by its reason) say of the request. */
const WHY: Readonly<Record<string, string>> = {
  HPE_INVALID_TRANSFER_ENCODING: 'its Transfer-Encoding does not end with chunked',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'it sends Content-Length more than once',
  HPE_INVALID_CONTENT_LENGTH: 'its Content-Length is not one number',
  HPE_INVALID_CHUNK_SIZE: 'its chunked body is malformed',
  HPE_INVALID_METHOD: 'its request line does not start with a method',
  HPE_INVALID_CONSTANT: 'its request line is not a method, a path and the HTTP version',
  HPE_INVALID_URL: 'its request line is not a method, a path and the HTTP version',
  HPE_INVALID_VERSION: 'its request line does not end with HTTP/1.0 or HTTP/1.1 and CRLF',
  HPE_INVALID_HEADER_TOKEN: 'a header is malformed',
  HPE_CR_EXPECTED: 'a line does not end with CRLF',
  HPE_LF_EXPECTED: 'a line does not end with CRLF',
};
const BOTH_LENGTHS = 'it sends both Content-Length and Transfer-Encoding';

/** A header name as RFC 9110 allows it (a token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** The first character a header's value may not hold (a control character other than tab), if any. */
function controlIn(value: string): number | undefined {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return code;
  }
  return undefined;
}

interface Head {
  verb: string;
  pathname: string;
  headers: Record<string, string>;
  refusal?: Refusal;
}

/** The request line and headers as far as the parser had them, and the header to blame if one is. */
function readHead(packet: Buffer | undefined): Head {
  const text = packet ? packet.toString('latin1') : '';
  const end = text.indexOf('\r\n\r\n');
  const [line = '', ...lines] = (end < 0 ? text : text.slice(0, end)).split('\r\n');
  const target = line.split(' ')[1] ?? '';
  const head: Head = {
    verb: line.split(' ')[0] ?? '',
    pathname: target.startsWith('/') ? splitUrl(target).pathname : '/',
    headers: {},
  };
  for (const header of lines) {
    const colon = header.indexOf(':');
    const name = colon < 0 ? header : header.slice(0, colon);
    const value = colon < 0 ? '' : header.slice(colon + 1);
    if (!TOKEN.test(name)) {
      // Not repeated: a name that is no name may hold anything, a card number included.
      head.refusal ??= refusals.httpUnreadable("a header's name holds a character no name may hold");
      continue;
    }
    if (colon < 0) head.refusal ??= refusals.httpUnreadable('a header line holds no colon');
    const control = controlIn(value);
    if (control !== undefined)
      head.refusal ??= refusals.httpUnreadable(
        control === 0
          ? NUL_RULE // the core's words for a NUL in a header that reaches it
          : `holds a control character (U+${control.toString(16).toUpperCase().padStart(4, '0')})`,
        name,
      );
    else head.headers[name.toLowerCase()] = value.trim();
  }
  return head;
}

function refusalOf(error: NodeJS.ErrnoException, head: Head): Refusal {
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return refusals.httpUnreadable(`its headers are larger than ${http.maxHeaderSize} bytes`, undefined, 431);
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return refusals.httpUnreadable('it did not arrive within the time the server gives a request', undefined, 408);
  if (head.refusal) return head.refusal;
  const reason = (error as { reason?: string }).reason ?? '';
  if (error.code === 'HPE_INVALID_TRANSFER_ENCODING' && /Content-Length/.test(reason))
    return refusals.httpUnreadable(BOTH_LENGTHS);
  return refusals.httpUnreadable(WHY[error.code ?? ''] ?? `it breaks HTTP/1.1's syntax (${error.code})`);
}

/** The answer as bytes on the wire; to a HEAD, its head only. */
function written(response: GatewayResponse, head: boolean): string {
  const body = typeof response.body === 'string' ? response.body : '';
  const headers = Object.entries({ ...response.headers, 'content-length': String(Buffer.byteLength(body)) })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `HTTP/1.1 ${response.status} ${http.STATUS_CODES[response.status]}\r\n${headers}connection: close\r\n\r\n${head ? '' : body}`;
}

/** The server's `clientError` listener: the refusal where Node would have written its bare one. */
export function answerUnreadable(gateway: Gateway): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    // As node:http does: answer only where no answer to an earlier request is being written.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) return void socket.destroy();
    const head = readHead((error as { rawPacket?: Buffer }).rawPacket);
    const answer = gateway.refusal(head.pathname, head.headers, refusalOf(error, head));
    // Ended, then closed once written: the server lets clients half-close (node.ts), so an end alone
    // would leave the connection open until the client ended it.
    socket.end(written(answer, head.verb === 'HEAD'), () => socket.destroy());
  };
}

// The one writer of log lines, for every component that prints what a caller sent: the stubs'
// console log, the sandbox's request log, the mock's lines, the CLI's listen output, the contract
// suite's console report. A caller controls much of what a log line shows (a path, the body's
// `method`, an unknown field's name, a header's value), so before a line is written:
// - every card number in it is masked, in any spelling (runtime/card-numbers.ts);
// - every character that could forge or hide a line is escaped, visibly: line ends (\n, \r, U+2028,
//   U+2029), the other C0 and C1 controls (ESC starts a terminal's escape sequences), DEL, the
//   bidirectional overrides and isolates that reorder what a reader sees, the noncharacters
//   U+FFFE/U+FFFF and lone surrogates (not text, and not well-formed XML either). A backslash stays
//   as it is: the commands a report prints (curl, with shell quoting) must still run when copied, and
//   a caller who writes "\n" as text forges no line with it.
// Runs in browsers too: nothing here touches Node until a writer is asked to write.
import { maskCardNumbers } from './card-numbers.ts';

const UNSAFE =
  /[\p{Cc}\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/gu;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One character shown as its escape: \n, \r, \t, or \xNN, \uNNNN. */
function escaped(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Text from outside made safe for one line of a log: card numbers masked, every unsafe character escaped. */
export function logSafe(text: string): string {
  return maskCardNumbers(text).replace(UNSAFE, escaped);
}

/**
 * Text of several lines (a report, a request as sent) made safe line by line: its own line ends kept,
 * card numbers masked over the whole (a number split across lines is still one), the rest escaped.
 */
export function logSafeLines(text: string): string {
  return maskCardNumbers(text)
    .split('\n')
    .map((line) => line.replace(UNSAFE, escaped))
    .join('\n');
}

/** Where a writer writes: process.stdout, process.stderr, a test's array. */
export interface LineSink {
  write(text: string): unknown;
}

/** The log writer: each line made safe (logSafe) and written with its line end. */
export function logWriter(sink: LineSink): (line: string) => void {
  return (line) => void sink.write(`${logSafe(line)}\n`);
}

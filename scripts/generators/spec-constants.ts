// The facts the sandbox implements that the spec states outside any schema's shape: the numbered
// refusal messages (x-numbered-refusals on Refusal), the CSV layouts by version (x-csv-columns) and the
// access token's lifetime (x-lifetime-minutes), the payout time zone (x-time) and settlement days
// (x-settlement-date). Generated as typed constants so that the sandbox reads them by name, checked by
// tsc, instead of walking the bundled document untyped; and the words of each pattern, format and long
// enumeration (x-expected) that the refusals use.
import type { Doc } from '../lib/contract.ts';
import { expectedWords } from '../lib/expected.ts';
import { tsHeader } from './banner.ts';

export function specConstantsModule(doc: Doc): string {
  const schemas = doc.components.schemas;
  const numbered = Object.fromEntries(
    Object.entries(schemas.Refusal['x-numbered-refusals'] as Record<string, { message: string }>).map(([name, r]) => [
      name,
      r.message,
    ]),
  );
  const csvColumns = {
    settlement: schemas.SettlementFile['x-csv-columns'],
    batchFile: schemas.ProcessBatchRequest.properties.batchFile['x-csv-columns'],
    batchResult: schemas.BatchResultFile['x-csv-columns'],
  };
  return [
    tsHeader(
      'Spec constants for the sandbox: numbered refusal messages, CSV columns by layout version, the access token lifetime.',
    ),
    '/** x-numbered-refusals on Refusal: the message of each refusal the gateway words with its error number. */',
    `export const numberedRefusals = ${JSON.stringify(numbered, null, 2)} as const;`,
    '',
    'export type NumberedRefusal = keyof typeof numberedRefusals;',
    '',
    '/** x-csv-columns: the settlement file, the batch file and the batch results, each by layout version. */',
    `export const csvColumns = ${JSON.stringify(csvColumns, null, 2)} as const;`,
    '',
    '/**',
    ' * x-expected: the words of each pattern, format and long enumeration, by rule (`pattern:<regex>`,',
    ' * `format:<name>`, `enum:<values>`); a refusal says "must be <words>" (server-stubs/core/refusals.ts).',
    ' */',
    `export const expectedValues: Readonly<Record<string, string>> = ${JSON.stringify(expectedWords(doc), null, 2)};`,
    '/** x-time and x-settlement-date: the zone payout times are written in, and how a settlement date is chosen (its cut-off, without the evidence). */',
    `export const payoutTimeZone = ${JSON.stringify(schemas.PayoutTimestamp['x-time'].zone)};`,
    `export const settlementDates = ${JSON.stringify(
      (({ zone, businessDays, cutOff: { sameDayUntil, nextDayFrom, sandbox } }) => ({
        zone,
        businessDays,
        cutOff: { sameDayUntil, nextDayFrom, sandbox },
      }))(schemas.SettledDate['x-settlement-date']),
    )} as const;`,
    '',
    '/** x-lifetime-minutes on AccessTokenResult. */',
    `export const accessTokenLifetimeMinutes = ${JSON.stringify(schemas.AccessTokenResult['x-lifetime-minutes'])};`,
    '',
  ].join('\n');
}

// What test/client/retry.test.ts checks of the retry marks and the client guide's table of them, as
// functions that return what is wrong. Paths are taken from where this file is: a copy of the package
// checks itself by importing its own copy of this module (test/architecture/add-method.test.ts).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { operations } from '../../generated/operations.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The operations that move money and carry no retry mark naming a safe operation of the table. */
export function unmarkedMoneyMovers(): string[] {
  const moneyMoving = [
    'processCard',
    'processAuth',
    'tokenProcessCard',
    'tokenProcessAuth',
    'walletProcessCard',
    'processDDebit',
  ];
  return moneyMoving.filter((id) => {
    const retry = operations.find((o) => o.operationId === id)?.retry;
    return !(retry && 'lookup' in retry
      ? operations.some((o) => o.operationId === retry.lookup && o.retry && 'safe' in o.retry)
      : false);
  });
}

/** docs/CLIENT-TEAMS.md's table of retries and the spec's marks, each as `operation: retry`, sorted. */
export async function retryTables(): Promise<{ documented: string[]; marked: string[] }> {
  const guide = await readFile(path.join(ROOT, 'docs/CLIENT-TEAMS.md'), 'utf8');
  const rows = [
    ...guide.matchAll(
      /^\| ([a-zA-Z, ]+) \| (look up with (\w+) by (\w+); sent again only if not found|safe: sent again) \|$/gm,
    ),
  ];
  const documented = rows.flatMap((r) =>
    r[1]!.split(', ').map((id) => `${id}: ${r[3] ? `lookup ${r[3]} ${r[4]}` : 'safe'}`),
  );
  const marked = operations
    .filter((o) => o.retry)
    .map((o) => `${o.operationId}: ${'safe' in o.retry! ? 'safe' : `lookup ${o.retry!.lookup} ${o.retry!.by}`}`);
  return { documented: documented.sort(), marked: marked.sort() };
}

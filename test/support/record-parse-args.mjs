// Preloaded (NODE_OPTIONS=--import) into a command under test: every node:util parseArgs call of the
// process, and of the processes it starts (they inherit NODE_OPTIONS), appends the option table it was
// given to the file PGW_RECORD_PARSE_ARGS names, one JSON line each. syncBuiltinESMExports() makes
// `import { parseArgs } from 'node:util'` see the recording one too. test/cli/help-lists-options.test.ts
// reads the tables: each is a parser the command's arguments reached.
import { appendFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import util from 'node:util';

const file = process.env.PGW_RECORD_PARSE_ARGS;
if (file) {
  const original = util.parseArgs;
  util.parseArgs = function recorded(config) {
    const options = Object.fromEntries(
      Object.entries(config?.options ?? {}).map(([name, o]) => [name, { type: o.type, short: o.short ?? null }]),
    );
    appendFileSync(file, `${JSON.stringify({ argv: process.argv.slice(2), options })}\n`);
    return original.call(this, config);
  };
  syncBuiltinESMExports();
}

// Preloaded (NODE_OPTIONS=--import) into a command under test: every worker thread the process
// starts appends one line to the file PGW_RECORD_WORKERS names (its eval'd code's first line, or its
// file). syncBuiltinESMExports() makes `import { Worker } from 'node:worker_threads'` see the
// recording class too. test/sandbox/accounts-command.test.ts reads it: a one-shot command starts none.
import { appendFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import threads from 'node:worker_threads';

const file = process.env.PGW_RECORD_WORKERS;
if (file && threads.isMainThread) {
  const Original = threads.Worker;
  threads.Worker = class RecordedWorker extends Original {
    constructor(what, options) {
      const shown = String(what).trim().split('\n')[0];
      appendFileSync(file, `${JSON.stringify({ argv: process.argv.slice(2), worker: shown })}\n`);
      super(what, options);
    }
  };
  syncBuiltinESMExports();
}

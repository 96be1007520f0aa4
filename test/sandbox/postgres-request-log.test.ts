// The request log's and the scenarios' tests again, each sandbox on a fresh PostgreSQL database
// (PGW_TEST_DATABASE_URL): the log's table, its batches and its pruning on the shared store, and
// fifty jobs' scenarios on the store several instances share.
import { onPostgres } from './support.ts';

await onPostgres('request log and scenarios', import.meta.url, './request-log.test.ts', './scenario-isolation.test.ts');

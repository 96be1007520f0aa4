// The scenarios of control.test.ts again, each sandbox on a fresh PostgreSQL database (PGW_TEST_DATABASE_URL).
import { onPostgres } from './support.ts';

await onPostgres('control', import.meta.url, './control.test.ts');

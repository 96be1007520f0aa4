// The scenarios of clock-tenancy.test.ts again, each sandbox on a fresh PostgreSQL database (PGW_TEST_DATABASE_URL).
import { onPostgres } from './support.ts';

await onPostgres('clock per account', import.meta.url, './clock-tenancy.test.ts');

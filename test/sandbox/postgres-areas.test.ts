// The scenarios of areas.test.ts again, each sandbox on a fresh PostgreSQL database (PGW_TEST_DATABASE_URL).
import { onPostgres } from './support.ts';

await onPostgres('areas', import.meta.url, './areas.test.ts');

// The scenarios of cards.test.ts again, each sandbox on a fresh PostgreSQL database (PGW_TEST_DATABASE_URL).
import { onPostgres } from './support.ts';

await onPostgres('cards', import.meta.url, './cards.test.ts');

// The PostgreSQL server the benches use, and a throw-away database on it per measurement: the server
// of PGW_BENCH_DATABASE_URL, else PGW_TEST_DATABASE_URL, else the cluster scripts/postgres/ensure.sh
// starts (installing PostgreSQL from Debian's packages when the machine lacks it).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

let server: string | undefined;
export function postgresServer(): string {
  server ??=
    process.env.PGW_BENCH_DATABASE_URL ||
    process.env.PGW_TEST_DATABASE_URL ||
    execFileSync('bash', [path.join(ROOT, 'scripts/postgres/ensure.sh')], { encoding: 'utf8' }).trim();
  return server;
}

/** Runs one statement on the server's own database (what CREATE and DROP DATABASE need). */
export async function onServer<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: postgresServer() });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export interface BenchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A new, empty database named `pgw_bench_<pid>_<label>` (PGW_TEST_DATABASE_PREFIX replaces pgw). */
export async function freshPostgresDatabase(label: string): Promise<BenchDatabase> {
  const name = `${process.env.PGW_TEST_DATABASE_PREFIX ?? 'pgw'}_bench_${process.pid}_${label}`;
  const drop = async () => void (await onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  await drop();
  await onServer(`CREATE DATABASE ${name}`);
  const url = new URL(postgresServer());
  url.pathname = `/${name}`;
  return { url: url.href, name, drop };
}

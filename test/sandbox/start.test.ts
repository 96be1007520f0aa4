// `npm start` as a user meets it: --help creates nothing; every start-up mistake (a bad environment
// value, a damaged database, a database without its key, another key) is one line and exit 2; the
// banner shows the credentials the store really has.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import { once } from 'node:events';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSandbox, SettingRefused } from '../../sandbox/index.ts';
import { poolSizeFromEnv, poolWaitFromEnv } from '../../sandbox/pool-settings.ts';
import { sqliteSynchronousFromEnv } from '../../sandbox/store.ts';
import { synchronousCommitFromEnv } from '../../sandbox/store-postgres.ts';
import { ended } from '../support/children.ts';
import { ROOT, doc } from '../support/contract.ts';

const MAIN = path.join(ROOT, 'sandbox/main.ts');
const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-start-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(PORT|HOST|PGW_)/.test(k)));
/**
 * A start as `npm start` makes it, on a port the system picks unless the test names one (PORT or
 * --port): on the default 4010 a start holds that port before it opens its database, and another
 * process on the machine listening there turned a database's refusal into "port 4010 is in use".
 */
const start = (args: string[], env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, [MAIN, ...args], {
    cwd: dir,
    env: { ...clean, PORT: '0', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const oneLine = (r: ReturnType<typeof start>, text: string | RegExp) => {
  expect(r.code).toBe(2);
  expect(r.out).toBe('');
  expect(r.err.trim().split('\n')).toHaveLength(1);
  expect(r.err).toMatch(text);
};

/** A database that holds a card, made with this key. */
async function databaseWithCard(file: string, key: Buffer): Promise<void> {
  const sandbox = await createSandbox({ dbPath: file, env: { PGW_SANDBOX_DATA_KEY: key.toString('base64') } });
  const body = JSON.stringify(doc.components.examples.addCard.value);
  const answer = await sandbox.gateway.handle({
    verb: 'POST',
    url: '/token',
    headers: { 'content-type': 'application/json', 'svc-api-version': '2.0' },
    body,
  });
  expect(JSON.parse(answer.body as string).responseCode).toBe('0');
  await sandbox.close();
}

/** The banner a sandbox started on this database prints, up to its test card line; the sandbox stopped after. */
async function bannerOf(file: string, env: Record<string, string> = {}): Promise<string> {
  const child = spawn(process.execPath, [MAIN, '--port', '0', '--db', file], { cwd: dir, env: { ...clean, ...env } });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (/test card/.test(out)) resolve();
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  await ended(child);
  return out;
}

describe('npm start, before it listens', () => {
  it('--help explains it and creates nothing', () => {
    const r = start(['--help']);
    expect(r.code).toBe(0);
    for (const name of [
      '--port',
      '--db',
      'PGW_DB',
      'PGW_SANDBOX_DATA_KEY',
      'PGW_SANDBOX_API_KEY',
      'PGW_SANDBOX_ALLOWED_ORIGINS',
    ])
      expect(r.out).toContain(name);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses a bad PORT, option or data key in one line', () => {
    oneLine(start([], { PORT: 'abc' }), "PORT must be a port number from 0 to 65535 (0 picks a free one), not 'abc'");
    oneLine(start(['--port', '70000']), /--port must be a port number/);
    oneLine(start(['--db']), /--db/);
    oneLine(
      start([], { PGW_SANDBOX_DATA_KEY: 'c2hvcnQ=' }),
      'PGW_SANDBOX_DATA_KEY must be 32 bytes in base64 (make one with: openssl rand -base64 32); this one is 5 bytes',
    );
    oneLine(
      start([], { PGW_SANDBOX_ALLOWED_ORIGINS: 'docs.example.com' }),
      /PGW_SANDBOX_ALLOWED_ORIGINS must list origins .*'docs\.example\.com' is none of them$/m,
    );
    // A wait the environment shortens (sandbox/waits.ts): refused as itself, not as a database that cannot be opened.
    oneLine(
      start([], { PGW_SANDBOX_CLOSE_GRACE_MS: 'soon' }),
      /^payment-gateway-sandbox: PGW_SANDBOX_CLOSE_GRACE_MS must be whole milliseconds above 0 \(a stop gives work under way some time\): got 'soon'$/m,
    );
    oneLine(
      start([], { PGW_NOTIFY_POST_TIMEOUT_MS: '2000', PGW_NOTIFY_LEASE_MS: '1000' }),
      /^payment-gateway-sandbox: PGW_NOTIFY_LEASE_MS must be whole milliseconds above 2000 \(longer than a post may take\): got '1000'$/m,
    );
    // Above a timer's longest wait Node would wait 1 ms: the opposite of what was asked.
    oneLine(
      start([], { PGW_SANDBOX_ANSWER_STALL_MS: '3000000000' }),
      /^payment-gateway-sandbox: PGW_SANDBOX_ANSWER_STALL_MS must be at most 2147483647 ms \(the longest wait a timer takes\): got '3000000000'$/m,
    );
    // The pool's settings are read before a database is opened, PostgreSQL's or not.
    oneLine(
      start([], { PGW_DB: 'postgres://nobody@127.0.0.1:1/none', PGW_DB_POOL: 'ten' }),
      /^payment-gateway-sandbox: PGW_DB_POOL must be a whole number of connections from 1 to 1000: got 'ten'$/m,
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it('names a damaged database and what to do', () => {
    const file = path.join(dir, 'damaged.db');
    writeFileSync(file, 'not a database at all, just text '.repeat(200));
    oneLine(start(['--db', file]), `cannot open the database ${file}: file is not a database`);
  });

  it('refuses a database a newer sandbox migrated, saying which versions', async () => {
    const file = path.join(dir, 'newer.db');
    await (await createSandbox({ dbPath: file, env: {} })).close();
    const db = new DatabaseSync(file);
    const version = Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
    db.exec(`PRAGMA user_version = ${version + 1}`);
    db.close();
    oneLine(
      start(['--db', file]),
      `the database ${file} is at schema v${version + 1}, newer than this sandbox's v${version}: a newer sandbox migrated it`,
    );
  });

  it('refuses a database damaged inside, which opens but fails where the damage is', async () => {
    const file = path.join(dir, 'inside.db');
    await (await createSandbox({ dbPath: file, env: {} })).close();
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0x41), 0, 4096, 4096 * 3);
    closeSync(fd);
    oneLine(start(['--db', file]), `the database ${file} is damaged (`);
  });

  it('refuses a database whose cards another key encrypted, and one copied without its key', async () => {
    const file = path.join(dir, 'cards.db');
    await databaseWithCard(file, randomBytes(32));
    oneLine(
      start(['--db', file], { PGW_SANDBOX_DATA_KEY: randomBytes(32).toString('base64') }),
      `the cards stored in ${file} were encrypted with another key than PGW_SANDBOX_DATA_KEY`,
    );
    // No key at all: the words say so (there was no 'new key' to name), and what to give.
    oneLine(
      start(['--db', file]),
      `the cards stored in ${file} were stored under a key this start does not have (there is no ${file}.key, and no PGW_SANDBOX_DATA_KEY): put the database's own key file beside it`,
    );
    // It made no key file that would hide the missing one next time.
    expect(existsSync(`${file}.key`)).toBe(false);
    // A program that opens it with createSandbox (a bench, a test) is refused the same, not given a
    // throwaway key under which the cards it adds could not be read by its next start.
    await expect(createSandbox({ dbPath: file, env: {} })).rejects.toThrow(
      `the cards stored in ${file} were stored under a key this start does not have (there is no ${file}.key`,
    );
    expect(existsSync(`${file}.key`)).toBe(false);
  });

  it('an environment value the start refuses is a SettingRefused naming its variable, not told by its words', async () => {
    // main.ts told these usage mistakes from the database's by their messages' first words, a rule
    // written twice (here and in index.ts); it now knows them by their class.
    const file = path.join(mkdtempSync(path.join(dir, 'setting-')), 'never.db');
    for (const [setting, value] of [
      ['PGW_SANDBOX_PARTNER_NOTIFY_URL', 'http://10.0.0.1/hooks'],
      ['PGW_SANDBOX_MAX_CONNECTIONS_PER_CLIENT', 'many'],
      ['PGW_SANDBOX_ALLOWED_ORIGINS', 'docs.example.com'],
      ['PGW_SANDBOX_ALLOWED_ORIGINS', 'none,null'],
      ['PGW_SANDBOX_ALLOWED_HOSTS', 'https://sandbox.example.com/'],
      ['PGW_SANDBOX_NPP_MS', '0'],
      ['PGW_NOTIFY_LEASE_MS', '9999999999'],
      ['PGW_SQLITE_SYNCHRONOUS', 'bogus'],
    ] as const) {
      const refused = await createSandbox({ dbPath: file, env: { [setting]: value } }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(SettingRefused);
      expect(refused).toMatchObject({ setting, message: expect.stringMatching(new RegExp(`^${setting} `)) });
    }
    // The pool's settings are read when a PostgreSQL store opens: the same class, told the same way.
    for (const [setting, read] of [
      ['PGW_DB_POOL', poolSizeFromEnv],
      ['PGW_DB_POOL_WAIT_MS', poolWaitFromEnv],
      ['PGW_PG_SYNCHRONOUS_COMMIT', synchronousCommitFromEnv],
      ['PGW_SQLITE_SYNCHRONOUS', sqliteSynchronousFromEnv],
    ] as const) {
      expect(() => read({ [setting]: 'ten' }), setting).toThrow(SettingRefused);
      expect(() => read({ [setting]: 'ten' }), setting).toThrow(new RegExp(`^${setting} `));
    }
    expect(existsSync(file)).toBe(false);
  });

  it('a start refused before its database opens makes no database, folder or key file; one refused as damaged keeps no key file it wrote', async () => {
    // Finding (a shared sandbox's operator): these were refused after the store had opened, leaving a
    // new database, its folder and a key file behind (the notify URL's refusal also blamed the database).
    const place = mkdtempSync(path.join(dir, 'refused-'));
    const file = path.join(place, 'data', 'new.db');
    const taken = net.createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const port = String((taken.address() as net.AddressInfo).port);
      oneLine(
        start(['--db', file, '--port', '0'], { PGW_SANDBOX_PARTNER_NOTIFY_URL: 'http://10.0.0.1/hooks' }),
        /^payment-gateway-sandbox: PGW_SANDBOX_PARTNER_NOTIFY_URL must not point to a private or link-local address$/m,
      );
      oneLine(
        start(['--db', file, '--port', '0'], { PGW_SANDBOX_MAX_CONNECTIONS_PER_CLIENT: 'many' }),
        /^payment-gateway-sandbox: PGW_SANDBOX_MAX_CONNECTIONS_PER_CLIENT must be a whole number of 1 or more, not many$/m,
      );
      oneLine(start(['--db', file, '--port', port]), `port ${port} is in use`);
      expect(readdirSync(place)).toEqual([]);
    } finally {
      taken.close();
    }
    // A database refused once opened (damaged inside) keeps no key file this start wrote for it.
    const damaged = path.join(place, 'damaged.db');
    await (await createSandbox({ dbPath: damaged, env: {} })).close();
    rmSync(`${damaged}.key`);
    const fd = openSync(damaged, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0x41), 0, 4096, 4096 * 3);
    closeSync(fd);
    oneLine(start(['--db', damaged, '--port', '0']), `the database ${damaged} is damaged (`);
    expect(readdirSync(place)).toEqual(['damaged.db']);
  });

  it('shows the stored credentials, and warns when the environment asks for others', async () => {
    const file = path.join(dir, 'accounts.db');
    await (await createSandbox({ dbPath: file, env: {} })).close();
    const out = await bannerOf(file, { PGW_SANDBOX_API_KEY: 'another-key' });
    // A stop closes the store as it should: no -wal or -shm file left beside it.
    expect(readdirSync(dir).filter((f) => f.startsWith('accounts.db'))).toEqual(['accounts.db', 'accounts.db.key']);
    const { apiKey } = doc.info['x-sandbox'];
    expect(out).toContain(`apiKey ${apiKey}`);
    expect(out).not.toContain('apiKey another-key');
    expect(out).toContain(`warning   PGW_SANDBOX_API_KEY is not applied: ${file} keeps the accounts it was made with`);
  });

  it('never shows secrets that accounts rotate made: the banner is the service log of a shared sandbox', async () => {
    const file = path.join(dir, 'rotated.db');
    await (await createSandbox({ dbPath: file, env: {} })).close();
    const { merchantUUID } = doc.info['x-sandbox'];
    const rotated = spawnSync(process.execPath, [MAIN, 'accounts', 'rotate', merchantUUID, '--db', file, '--json'], {
      cwd: dir,
      env: clean,
      encoding: 'utf8',
    });
    expect(rotated.status, rotated.stderr).toBe(0);
    const secrets = JSON.parse(rotated.stdout) as { apiKey: string; passphrase: string };
    const out = await bannerOf(file);
    expect(out).toContain(`merchantUUID ${merchantUUID}  (its secrets are its own, not shown`);
    expect(out).not.toContain(secrets.apiKey);
    expect(out).not.toContain(secrets.passphrase);
  });

  it("notes a merchant that is not the spec's, with the variable clients then need", async () => {
    const merchantUUID = '7a3c5e9b1d2f4';
    const child = spawn(process.execPath, [MAIN, '--port', '0', '--db', ':memory:'], {
      cwd: dir,
      env: { ...clean, PGW_SANDBOX_MERCHANT_UUID: merchantUUID },
    });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        // The banner is one write, its control line before the notes: whole once that line has ended.
        if (/\n {2}control .*\n/.test(out) && out.endsWith('\n')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}:\n${out}`)));
    });
    await ended(child);
    expect(out).toContain(
      `note      the merchant is not the spec's x-sandbox one (${doc.info['x-sandbox'].merchantUUID}): clients and the contract suite need PGW_MERCHANT_UUID=${merchantUUID}`,
    );
  });
});

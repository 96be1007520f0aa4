// payment-gateway sign, from the source: every recipe's worked example in x-hash-recipes reproduced
// from flags, an operation's hashes filled into its body as the sandbox checks them, and a mistake
// refused in one line.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, doc } from '../support/contract.ts';

const CLI = path.join(ROOT, 'cli/main.ts');
const sign = (args: string[]) => spawnSync(process.execPath, [CLI, 'sign', ...args], { encoding: 'utf8' });

describe('payment-gateway sign', () => {
  const recipes = Object.entries<any>(doc['x-hash-recipes']);

  it.each(recipes.filter(([, r]) => r.algorithm === 'md5'))(
    '%s: the worked example, from --field flags',
    (name, recipe) => {
      const fields = Object.entries<unknown>(recipe.example.fields).filter(
        ([, v]) => !(Array.isArray(v) && v.length === 0),
      );
      const r = sign([
        name,
        '--passphrase',
        recipe.example.passphrase,
        ...fields.flatMap(([k, v]) => ['--field', `${k}=${v}`]),
      ]);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe(`${recipe.example.hash}\n`);
    },
  );

  it('message: the HMAC of the worked example, with its canonical JSON as the preimage', () => {
    const example = doc['x-hash-recipes'].message!.example!;
    const r = sign([
      'message',
      '--passphrase',
      example.passphrase,
      '--body',
      JSON.stringify(example.fields),
      '--preimage',
    ]);
    expect(r.stdout).toBe(`preimage message (message): ${example.canonical}\nmessage ${example.hash}\n`);
  });

  it('--list writes out every recipe', () => {
    const out = execFileSync(process.execPath, [CLI, 'sign', '--list'], { encoding: 'utf8' });
    for (const [name] of recipes) expect(out).toMatch(new RegExp(`^  ${name} `, 'm'));
    expect(out).toContain('md5(lower(md5(passphrase) + merchantUUID + transactionAmount + transactionCurrency))');
  });

  it.each([
    [['transaction', '--field', 'merchantUUID'], "--field takes NAME=VALUE, not 'merchantUUID'"],
    [['processCard', '--body', '{not json'], '--body is not JSON'],
    [['processCard', '--body', '@/no/such/file.json'], '--body: cannot read /no/such/file.json: ENOENT'],
    [['addCard', '--signed-body'], 'addCard takes no message hash'],
    [[], 'name a recipe or an operationId'],
  ])('%j is refused in one line', (args, message) => {
    const r = sign(args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`payment-gateway sign: ${r.stderr.slice('payment-gateway sign: '.length)}`);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(message);
  });

  // Outside vectors: the gateway vendor's Magento module (merchantwarrior/magento2,
  // Test/Unit/Model/HashGeneratorTest.php: passphrase and merchant UUID 'test') states each hash as a
  // formula; it is computed here with node:crypto, not with the project's signer.
  const md5 = (text: string) => createHash('md5').update(text).digest('hex');
  it.each([
    [
      'processAuth',
      ['transactionAmount=100', 'transactionCurrency=AUD'],
      md5(`${md5('test')}test100AUD`.toLowerCase()),
    ],
    ['processAuth', ['transactionAmount=100'], md5(`${md5('test')}test100`.toLowerCase())],
    ['processVoid', ['transactionID=1-1-1-1'], md5(`${md5('test')}test1-1-1-1`.toLowerCase())],
  ])("%s %j: the hash the vendor's Magento module computes", (operationId, fields, hash) => {
    const r = sign([
      operationId,
      '--passphrase',
      'test',
      '--field',
      'merchantUUID=test',
      ...fields.flatMap((f) => ['--field', f]),
    ]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${hash}\n`);
  });

  it('a header-signed operation: HMAC-SHA256 over the sorted JSON of path, query and body, as node:crypto computes it', () => {
    const body = { payId: 'p@example.com', amount: 5 };
    const r = sign([
      'createPayId',
      '--passphrase',
      'pp',
      '--body',
      JSON.stringify(body),
      '--query',
      'z=1',
      '--preimage',
    ]);
    const canonical = JSON.stringify({ amount: 5, payId: 'p@example.com', z: '1' });
    const hmac = createHmac('sha256', 'pp').update(canonical).digest('hex');
    expect(r.stdout).toBe(`preimage SVC-MESSAGEHASH (message): ${canonical}\nSVC-MESSAGEHASH ${hmac}\n`);
  });

  it('--signed-body: the body the typed client would send, hashes filled by the same signer', () => {
    const r = sign([
      'processVoid',
      '--passphrase',
      'test',
      '--field',
      'merchantUUID=test',
      '--field',
      'transactionID=1-1-1-1',
      '--signed-body',
    ]);
    expect(JSON.parse(r.stdout)).toEqual({
      method: 'processVoid',
      merchantUUID: 'test',
      transactionID: '1-1-1-1',
      hash: md5(`${md5('test')}test1-1-1-1`.toLowerCase()),
    });
  });
});

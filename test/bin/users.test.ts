import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { verifyPassword } from '../../lib/passwords.ts';
import { openSqliteStore } from '../../lib/store/sqlite.ts';
import { VIEWFINDER_BIN } from '../support/viewfinder-cli.ts';

/** Runs bin/viewfinder on DATA_DIR with `stdin` piped in, as `echo … | viewfinder users …` would. */
function viewfinder(dataDir: string, args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string; json: any }> {
  const { MONGODB_URI: _ignored, ...env } = process.env;
  return new Promise((resolve, reject) => {
    const child = spawn(VIEWFINDER_BIN, args, { env: { ...env, DATA_DIR: dataDir, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
    child.stdin.end(stdin);
  });
}

describe('bin/viewfinder users (dashboard users, on the embedded store)', () => {
  let dataDir: string;
  let account: string;
  const ok = async (args: string[], stdin?: string) => {
    const result = await viewfinder(dataDir, args, stdin);
    expect(result.code, result.stderr).to.equal(0);
    return result;
  };
  const storedHash = async (email: string) => {
    const store = openSqliteStore({ dataDir });
    try {
      return (await store.findUserByEmail(email))?.passwordHash;
    } finally {
      await store.close();
    }
  };

  beforeEach(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-users-'));
    account = (await ok(['accounts', 'create', 'Acme'])).json.account.id;
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('creates a user with the password from stdin, stored only as a scrypt hash', async () => {
    const created = await ok(['users', 'create', '-a', account, '-e', 'Ada@Example.com'], 'correct horse battery\n');
    expect(created.json.user).to.include({ accountId: account, email: 'ada@example.com' });
    expect(created.json).to.not.have.property('password');
    expect(created.stdout).to.not.include('scrypt').and.not.include('correct horse');
    const hash = await storedHash('ada@example.com');
    expect(hash).to.match(/^scrypt\$/);
    expect(await verifyPassword('correct horse battery', hash as string)).to.equal(true);
  });

  it('refuses a short password, a second user with the same email, and an unknown account', async () => {
    const short = await viewfinder(dataDir, ['users', 'create', '-a', account, '-e', 'ada@example.com'], 'short\n');
    expect(short.code).to.equal(1);
    expect(short.stderr).to.match(/at least 12 characters/);
    await ok(['users', 'create', '-a', account, '-e', 'ada@example.com'], 'correct horse battery');
    const twice = await viewfinder(dataDir, ['users', 'create', '-a', account, '-e', 'ADA@example.com'], 'correct horse battery');
    expect(twice.code).to.equal(1);
    expect(twice.stderr).to.match(/already exists/);
    const orphan = await viewfinder(dataDir, ['users', 'create', '-a', 'acct_missing', '-e', 'bob@example.com'], 'correct horse battery');
    expect(orphan.code).to.equal(1);
    expect(orphan.stderr).to.match(/Account acct_missing not found/);
  });

  it('lists users without their hashes, resets a password and deletes a user', async () => {
    await ok(['users', 'create', '-a', account, '-e', 'ada@example.com'], 'correct horse battery');
    const listed = await ok(['users', 'list', '-a', account]);
    expect(listed.json.users.map((u: { email: string }) => u.email)).to.deep.equal(['ada@example.com']);
    expect(listed.stdout).to.not.include('scrypt');

    const reset = await ok(['users', 'reset-password', 'ada@example.com'], 'another long password');
    expect(reset.json).to.include({ endedSessions: 0 });
    expect(await verifyPassword('another long password', (await storedHash('ada@example.com')) as string)).to.equal(true);

    expect((await ok(['users', 'delete', 'ada@example.com'])).json.deleted).to.match(/^user_/);
    expect((await ok(['users', 'list'])).json.users).to.deep.equal([]);
    const gone = await viewfinder(dataDir, ['users', 'delete', 'ada@example.com']);
    expect(gone.code).to.equal(1);
    expect(gone.stderr).to.match(/No user has the email ada@example.com/);
  });
});

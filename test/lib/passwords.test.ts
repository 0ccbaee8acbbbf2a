import { expect } from 'chai';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from '../../lib/passwords.ts';

describe('passwords (scrypt)', () => {
  it('verifies the password it hashed and refuses any other', async () => {
    const encoded = await hashPassword('correct horse battery');
    expect(await verifyPassword('correct horse battery', encoded)).to.equal(true);
    expect(await verifyPassword('correct horse batterY', encoded)).to.equal(false);
    expect(await verifyPassword('', encoded)).to.equal(false);
  });

  it('salts every hash: the same password hashes differently twice, and neither holds the password', async () => {
    const [a, b] = await Promise.all([hashPassword('correct horse battery'), hashPassword('correct horse battery')]);
    expect(a).to.not.equal(b);
    expect(a).to.match(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(a).to.not.include('horse');
  });

  it('refuses a malformed stored hash instead of throwing', async () => {
    expect(await verifyPassword('anything at all', 'plain-text')).to.equal(false);
    expect(await verifyPassword('anything at all', 'scrypt$1$2$3')).to.equal(false);
  });

  it('gives a decoy hash that no password is known to match', async () => {
    expect(await verifyPassword('', await decoyHash())).to.equal(false);
    expect(await decoyHash()).to.equal(await decoyHash());
  });

  it('says why a password is too short or too long', () => {
    expect(passwordProblem('short')).to.match(/at least 12/);
    expect(passwordProblem('x'.repeat(1025))).to.match(/at most 1024/);
    expect(passwordProblem('twelve chars')).to.equal(undefined);
  });
});

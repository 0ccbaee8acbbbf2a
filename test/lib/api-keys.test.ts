import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { displayPrefix, generateApiKey, hashApiKey, hashesEqual, looksLikeApiKey } from '../../lib/api-keys.ts';

describe('API keys (lib/api-keys.ts)', () => {
  it('generates vf_ followed by 32 random bytes in base64url', () => {
    const { secret } = generateApiKey();
    expect(secret).to.match(/^vf_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret.slice(3), 'base64url')).to.have.length(32);
  });

  it('never generates the same key twice in a thousand', () => {
    const secrets = new Set(Array.from({ length: 1000 }, () => generateApiKey().secret));
    expect(secrets.size).to.equal(1000);
  });

  it('hashes with SHA-256 over the whole key, in hex', () => {
    const { secret, hash } = generateApiKey();
    expect(hash).to.equal(createHash('sha256').update(secret).digest('hex'));
    expect(hashApiKey(secret)).to.equal(hash);
  });

  it('shows vf_ and 8 characters as the display prefix', () => {
    const { secret, prefix } = generateApiKey();
    expect(prefix).to.equal(secret.slice(0, 11));
    expect(displayPrefix('vf_abcdefghXYZ')).to.equal('vf_abcdefgh');
  });

  it('recognises the key shape and nothing else', () => {
    expect(looksLikeApiKey(generateApiKey().secret)).to.equal(true);
    for (const other of ['', 'vf_', 'sk_live_123', `vf_${'a'.repeat(42)}`, `vf_${'a'.repeat(44)}`, `vf_${'a'.repeat(42)}!`]) {
      expect(looksLikeApiKey(other), other).to.equal(false);
    }
  });

  it('compares hashes for equality only when they are equal and well-formed', () => {
    const { hash } = generateApiKey();
    expect(hashesEqual(hash, hash)).to.equal(true);
    expect(hashesEqual(hash, generateApiKey().hash)).to.equal(false);
    expect(hashesEqual(hash, hash.slice(0, 10))).to.equal(false);
    expect(hashesEqual('', '')).to.equal(false);
  });
});

import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { ConfigError } from '../../lib/env.ts';
import { loadSecretKeys, secretSealer } from '../../lib/store/secret-sealing.ts';

describe('signing secrets keys (SIGNING_SECRETS_KEY, SIGNING_SECRETS_PREVIOUS_KEYS)', () => {
  it('reads 32-byte base64 keys, none by default, and refuses anything else', () => {
    const [one, two] = [randomBytes(32), randomBytes(32)];
    expect(loadSecretKeys({})).to.deep.equal({ current: undefined, previous: [] });
    expect(loadSecretKeys({ SIGNING_SECRETS_KEY: one.toString('base64'), SIGNING_SECRETS_PREVIOUS_KEYS: two.toString('base64') })).to.deep.equal({ current: one, previous: [two] });
    for (const bad of ['short', randomBytes(16).toString('base64'), `${one.toString('base64')}!`]) {
      expect(() => loadSecretKeys({ SIGNING_SECRETS_KEY: bad }), bad).to.throw(ConfigError, /SIGNING_SECRETS_KEY must be 32 random bytes in base64/);
    }
  });

  it('refuses a sealed value that was changed (the tag no longer checks)', () => {
    const sealer = secretSealer({ current: randomBytes(32) });
    const sealed = sealer.seal('s'.repeat(64));
    const tampered = sealed.replace(/:([A-Za-z0-9_-])([A-Za-z0-9_-]*):([A-Za-z0-9_-]+)$/, (_m, first: string, rest: string, tag: string) => `:${first === 'A' ? 'B' : 'A'}${rest}:${tag}`);
    expect(tampered).to.not.equal(sealed);
    expect(() => sealer.open(tampered)).to.throw();
    expect(sealer.open(sealed)).to.equal('s'.repeat(64));
  });
});

import { expect } from 'chai';
import { ConfigError, readBool, readEnum, readInt, readList } from '../../lib/env.ts';

describe('environment readers', () => {
  it('readInt returns the fallback when unset or blank, and the parsed value otherwise', () => {
    expect(readInt({}, 'N', 7)).to.equal(7);
    expect(readInt({ N: '  ' }, 'N', 7)).to.equal(7);
    expect(readInt({ N: '42' }, 'N', 7)).to.equal(42);
  });

  it('readInt rejects non-integers and values out of range, naming the variable', () => {
    expect(() => readInt({ N: '4.2' }, 'N', 7)).to.throw(ConfigError, /N must be an integer/);
    expect(() => readInt({ N: '30s' }, 'N', 7)).to.throw(ConfigError, /N must be an integer/);
    expect(() => readInt({ N: '0' }, 'N', 7, { min: 1 })).to.throw(ConfigError, /N must be >= 1/);
    expect(() => readInt({ N: '9' }, 'N', 7, { max: 8 })).to.throw(ConfigError, /N must be <= 8/);
  });

  it('readBool accepts the usual spellings and rejects others', () => {
    expect(readBool({ B: 'true' }, 'B', false)).to.equal(true);
    expect(readBool({ B: '0' }, 'B', true)).to.equal(false);
    expect(readBool({}, 'B', true)).to.equal(true);
    expect(() => readBool({ B: 'maybe' }, 'B', true)).to.throw(ConfigError);
  });

  it('readList splits on commas and drops blanks', () => {
    expect(readList({ L: ' a, b ,,c ' }, 'L')).to.deep.equal(['a', 'b', 'c']);
    expect(readList({}, 'L')).to.deep.equal([]);
  });

  it('readEnum rejects values outside the set', () => {
    expect(readEnum({ M: 'hosted' }, 'M', ['self-hosted', 'hosted'] as const, 'self-hosted')).to.equal('hosted');
    expect(() => readEnum({ M: 'cloud' }, 'M', ['self-hosted', 'hosted'] as const, 'self-hosted')).to.throw(ConfigError, /M must be one of/);
  });
});

import { expect } from 'chai';
import { SettleHints } from '../../../services/renderer/src/capture/settle-hints.ts';

describe('SettleHints', () => {
  it('gives the full cap to a page it has not seen often enough', () => {
    const hints = new SettleHints({ minSamples: 2 });
    expect(hints.capFor('https://a.example/x', 1000, 8000)).to.equal(8000);
    hints.record('https://a.example/x', 500);
    expect(hints.capFor('https://a.example/x', 1000, 8000)).to.equal(8000);
  });

  it('caps a known page at twice its moving average plus a second, within bounds', () => {
    const hints = new SettleHints({ minSamples: 2, alpha: 0.5 });
    hints.record('https://a.example/x', 1000);
    hints.record('https://a.example/x', 2000); // average 1500
    expect(hints.capFor('https://a.example/x', 1000, 8000)).to.equal(4000);
    hints.record('https://a.example/x', 8000); // average 4750
    expect(hints.capFor('https://a.example/x', 1000, 8000)).to.equal(8000);
  });

  it('keys pages by origin and path: query strings share a hint, other paths and hosts do not', () => {
    const hints = new SettleHints({ minSamples: 1 });
    hints.record('https://a.example/x?id=1', 100);
    expect(hints.capFor('https://a.example/x?id=2', 1000, 8000)).to.equal(1200);
    expect(hints.capFor('https://a.example/y', 1000, 8000)).to.equal(8000);
    expect(hints.capFor('https://b.example/x', 1000, 8000)).to.equal(8000);
  });

  it('stays bounded, dropping the least recently used page first', () => {
    const hints = new SettleHints({ maxPages: 2, minSamples: 1 });
    hints.record('https://a.example/1', 100);
    hints.record('https://a.example/2', 100);
    hints.record('https://a.example/1', 100); // 1 is now the most recent
    hints.record('https://a.example/3', 100);
    expect(hints.size).to.equal(2);
    expect(hints.capFor('https://a.example/2', 1000, 8000)).to.equal(8000);
    expect(hints.capFor('https://a.example/1', 1000, 8000)).to.be.below(8000);
  });
});

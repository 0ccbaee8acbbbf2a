import { expect } from 'chai';
import { REASONS, withReady } from '../../operator/src/conditions.ts';

describe('operator conditions', () => {
  const t0 = new Date('2026-01-01T00:00:00Z');
  const t1 = new Date('2026-01-01T00:05:00Z');
  const t2 = new Date('2026-01-01T00:10:00Z');

  it('sets Ready with reason, message, observedGeneration and a transition time', () => {
    const [ready] = withReady(undefined, { ready: false, reason: REASONS.SiteNotFound, message: 'Site x does not exist' }, 3, t0);
    expect(ready).to.deep.equal({
      type: 'Ready',
      status: 'False',
      reason: 'SiteNotFound',
      message: 'Site x does not exist',
      lastTransitionTime: t0.toISOString(),
      observedGeneration: 3,
    });
  });

  it('keeps lastTransitionTime while the status stays the same, even when the reason changes', () => {
    const first = withReady(undefined, { ready: false, reason: REASONS.SiteNotFound, message: 'a' }, 1, t0);
    const second = withReady(first, { ready: false, reason: REASONS.ApiUnavailable, message: 'b' }, 2, t1);
    expect(second).to.have.length(1);
    expect(second[0]).to.include({ reason: 'ApiUnavailable', lastTransitionTime: t0.toISOString(), observedGeneration: 2 });
  });

  it('moves lastTransitionTime when the status flips', () => {
    const notReady = withReady(undefined, { ready: false, reason: REASONS.SiteNotFound, message: 'a' }, 1, t0);
    const isReady = withReady(notReady, { ready: true, reason: REASONS.Reconciled, message: 'ok' }, 1, t1);
    expect(isReady[0]).to.include({ status: 'True', lastTransitionTime: t1.toISOString() });
    const again = withReady(isReady, { ready: false, reason: REASONS.ApiUnavailable, message: 'down' }, 1, t2);
    expect(again[0]).to.include({ status: 'False', lastTransitionTime: t2.toISOString() });
  });

  it('leaves other condition types alone', () => {
    const other = { type: 'Degraded', status: 'False' as const, reason: 'Fine', message: '', lastTransitionTime: t0.toISOString(), observedGeneration: 1 };
    const conditions = withReady([other], { ready: true, reason: REASONS.Reconciled, message: 'ok' }, 1, t1);
    expect(conditions.map((condition) => condition.type)).to.deep.equal(['Degraded', 'Ready']);
  });
});

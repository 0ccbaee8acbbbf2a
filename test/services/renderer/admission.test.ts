import { expect } from 'chai';
import { TooManyRequests } from '../../../lib/errors.ts';
import { createAdmission } from '../../../services/renderer/src/admission.ts';

describe('renderer admission (bounded queue in front of the pool)', () => {
  const never = () => new AbortController().signal;

  it('grants up to capacity slots at once, then queues up to the limit', async () => {
    const admission = createAdmission(2, 1);
    await admission.acquire(never());
    await admission.acquire(never());
    void admission.acquire(never());
    expect([admission.running(), admission.queued()]).to.deep.equal([2, 1]);
  });

  it('refuses beyond the queue limit with 429 and a Retry-After of at least one second', async () => {
    const admission = createAdmission(1, 1);
    await admission.acquire(never());
    void admission.acquire(never());
    const refusal = await admission.acquire(never()).catch((err: unknown) => err);
    expect(refusal).to.be.instanceOf(TooManyRequests);
    const { status, headers } = refusal as TooManyRequests;
    expect(status).to.equal(429);
    expect(Number(headers['Retry-After'])).to.be.at.least(1);
  });

  it('estimates Retry-After from recent capture durations and the queue ahead', async () => {
    const admission = createAdmission(1, 2);
    const first = await admission.acquire(never());
    const second = admission.acquire(never());
    first.release(10_000);
    const running = await second;
    void admission.acquire(never());
    void admission.acquire(never());
    const refusal = (await admission.acquire(never()).catch((err: unknown) => err)) as TooManyRequests;
    // One 10 s capture on record, two queued ahead on one slot: about 30 s.
    expect(Number(refusal.headers['Retry-After'])).to.equal(30);
    running.release(10_000);
  });

  it('hands a released slot to the first waiter, in arrival order', async () => {
    const admission = createAdmission(1, 2);
    const first = await admission.acquire(never());
    const order: string[] = [];
    const a = admission.acquire(never()).then((slot) => (order.push('a'), slot));
    const b = admission.acquire(never()).then((slot) => (order.push('b'), slot));
    first.release(1);
    (await a).release(1);
    (await b).release(1);
    expect(order).to.deep.equal(['a', 'b']);
    expect([admission.running(), admission.queued()]).to.deep.equal([0, 0]);
  });

  it('a waiter whose signal aborts leaves the queue with the signal reason and takes no slot', async () => {
    const admission = createAdmission(1, 2);
    const first = await admission.acquire(never());
    const controller = new AbortController();
    const waiting = admission.acquire(controller.signal);
    const reason = new Error('client went away');
    controller.abort(reason);
    expect(await waiting.catch((err: unknown) => err)).to.equal(reason);
    expect(admission.queued()).to.equal(0);
    first.release(1);
    expect(admission.running()).to.equal(0);
  });

  it('releasing a slot twice frees it once', async () => {
    const admission = createAdmission(2, 0);
    const slot = await admission.acquire(never());
    await admission.acquire(never());
    slot.release(1);
    slot.release(1);
    expect(admission.running()).to.equal(1);
  });
});

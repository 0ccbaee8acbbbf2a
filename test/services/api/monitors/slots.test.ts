import { mock } from 'node:test';
import { expect } from 'chai';
import { monitorSlots, type MonitorSlot, type MonitorSlotTiming } from '../../../../services/api/src/monitors/slots.ts';
import type { Renderer, RendererStats } from '../../../../services/renderer/src/renderer.ts';

/**
 * The rule by which monitor captures take render slots (slots.ts), on a tier whose load the test
 * sets: what a renderer's stats() say is all the rule reads. The clock is Node's mock clock, so
 * "waits a quiet second" is checked by moving time, not by measuring it.
 */
describe('monitor slots: a share, never the last free slot, and only a quiet tier', () => {
  const timing: MonitorSlotTiming = { quietMs: 1000, maxWaitMs: 60_000, sampleMs: 50 };
  let tier: RendererStats;
  const renderer = { stats: () => tier } as unknown as Renderer;
  /** Moves the mock clock by `ms`, one sample at a time, letting the waiting code run in between. */
  const advance = async (ms: number) => {
    for (let moved = 0; moved < ms; moved += timing.sampleMs) {
      mock.timers.tick(timing.sampleMs);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  /** Starts an acquire; `release` is set once it resolved (with the slot). */
  const start = (slots: ReturnType<typeof monitorSlots>, waitingSince?: number) => {
    const state: { release?: () => void; slot?: MonitorSlot } = {};
    void slots.acquire(undefined, waitingSince).then((slot) => {
      state.slot = slot;
      state.release = () => slot.release();
    });
    return state;
  };

  beforeEach(() => {
    mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: 1_000_000 });
    tier = { capacity: 2, inFlight: 0, queued: 0, browserRestarts: 0, browserCrashes: 0 };
  });
  afterEach(() => mock.timers.reset());

  it('on an idle tier, starts once the tier has been quiet for the quiet window', async () => {
    const slots = monitorSlots(renderer, 25, timing);
    const capture = start(slots);
    await advance(500);
    expect(capture.release, 'before a quiet window has passed').to.equal(undefined);
    await advance(600);
    expect(capture.release).to.be.a('function');
    expect(slots.inUse()).to.equal(1);
  });

  it('on a tier of two slots, waits while any client capture runs, and a client capture seen between two of its own restarts the window', async () => {
    const slots = monitorSlots(renderer, 25, timing);
    tier.inFlight = 1;
    const capture = start(slots);
    await advance(5000);
    expect(capture.release, 'a client holds one of the two slots').to.equal(undefined);
    tier.inFlight = 0;
    await advance(600);
    tier.inFlight = 1; // the client's next request, 600 ms later
    await advance(200);
    tier.inFlight = 0;
    await advance(900);
    expect(capture.release, 'only 900 ms since the client last ran').to.equal(undefined);
    await advance(200);
    expect(capture.release).to.be.a('function');
  });

  it('keeps to its share and does not count its own captures as clients', async () => {
    tier.capacity = 8; // share 25 %: 2 slots; quiet while clients use at most 8 - 2 - 1 = 5
    const slots = monitorSlots(renderer, 25, timing);
    tier.inFlight = 5;
    const first = start(slots);
    await advance(1100);
    expect(first.release).to.be.a('function');
    tier.inFlight = 6; // the first monitor capture now runs
    const second = start(slots);
    await advance(1100);
    expect(second.release).to.be.a('function');
    tier.inFlight = 7;
    const third = start(slots);
    await advance(5000);
    expect(third.release, 'beyond the share of 2').to.equal(undefined);
    first.release?.();
    tier.inFlight = 6;
    await advance(500);
    expect(third.release, 'a quiet window after the last monitor capture ended').to.equal(undefined);
    await advance(600);
    expect(third.release).to.be.a('function');
  });

  it('after the longest wait, settles for a free slot on a busy tier, but never the last one', async () => {
    tier.capacity = 8;
    tier.inFlight = 6; // clients beyond the quiet level of 5, two slots free
    const slots = monitorSlots(renderer, 25, timing);
    const capture = start(slots);
    await advance(30_000);
    expect(capture.release, 'the tier was never quiet').to.equal(undefined);
    await advance(30_100);
    expect(capture.release, 'after maxWaitMs').to.be.a('function');

    tier.capacity = 2;
    tier.inFlight = 1; // one free slot: the last one
    const other = monitorSlots(renderer, 100, timing);
    const last = start(other);
    await advance(120_000);
    expect(last.release, 'the last free slot stays for clients').to.equal(undefined);
  });

  it('on a tier of one slot, takes it only when it is free and quiet', async () => {
    tier.capacity = 1;
    tier.inFlight = 1;
    const slots = monitorSlots(renderer, 25, timing);
    const capture = start(slots);
    await advance(3000);
    expect(capture.release).to.equal(undefined);
    tier.inFlight = 0;
    await advance(1100);
    expect(capture.release).to.be.a('function');
  });

  it('preempts its running capture when clients come back, and frees the slot', async () => {
    tier.capacity = 2;
    const slots = monitorSlots(renderer, 25, timing);
    const capture = start(slots);
    await advance(1100);
    expect(capture.slot?.preempted.aborted).to.equal(false);
    tier.inFlight = 2; // its own capture and a client's
    await advance(100);
    expect(capture.slot?.preempted.aborted, 'a client capture came').to.equal(true);
    capture.release?.();
    tier.inFlight = 1;
    expect(slots.inUse()).to.equal(0);
    const again = start(slots);
    await advance(3000);
    expect(again.release, 'the client is still there').to.equal(undefined);
  });

  it('no longer preempts a capture that waited its longest in all', async () => {
    tier.capacity = 2;
    const slots = monitorSlots(renderer, 25, timing);
    const capture = start(slots, Date.now() - timing.maxWaitMs);
    await advance(100);
    tier.inFlight = 2;
    await advance(1000);
    expect(capture.slot?.preempted.aborted).to.equal(false);
  });
});

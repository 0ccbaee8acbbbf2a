import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { JobRunner } from '../../../../lib/jobs/runner.ts';
import type { Job } from '../../../../lib/store/jobs.ts';
import { openStore } from '../../../../lib/store/open.ts';
import type { Store } from '../../../../lib/store/store.ts';
import { openDirectoryBlobStore } from '../../../../lib/blobs/directory-blob-store.ts';
import { monitorImagesIn } from '../../../../services/api/src/monitors/images.ts';
import { monitorView } from '../../../../services/api/src/monitors/management.ts';
import { startMonitorService, type MonitorService } from '../../../../services/api/src/monitors/service.ts';
import { silentLogger } from '../../../support/harness.ts';
import { createStubRenderer } from '../../../support/stub-renderer.ts';

/**
 * The monitor scheduler's ticks (service.ts), on its own clock and with a runner that only records
 * what it is asked to queue: which boundaries a tick queues, whatever the real time.
 */
describe('the monitor scheduler', () => {
  let dataDir: string;
  let store: Store;
  let service: MonitorService;
  let clock: Date;
  let queued: string[];

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'viewfinder-scheduler-'));
    store = await openStore({ backend: 'sqlite', dataDir, busyTimeoutMs: 5000 });
    queued = [];
    const runner = {
      register() {},
      async enqueue(_type: string, _owner: string, payload: { scheduledAt: string }) {
        queued.push(payload.scheduledAt);
        return { job: {} as Job, created: true };
      },
    } as unknown as JobRunner;
    const images = monitorImagesIn(await openDirectoryBlobStore({ dir: path.join(dataDir, 'blobs') }));
    clock = new Date(Date.now() - 2000);
    // A tick far longer than the test: the test ticks by hand.
    const config = { images: { blobs: { kind: 'directory' as const, dir: '' }, legacy: { backend: 'disk' as const, dir: '' } }, slotSharePercent: 50, schedulerIntervalMs: 60_000, runConcurrency: 1 };
    service = startMonitorService({ store, renderer: createStubRenderer({ capacity: 1, delayMs: () => 0 }), images, runner, config, logger: silentLogger, now: () => clock });
    await service.tick();
  });
  afterEach(async () => {
    service.stop();
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs a monitor created less than a tick before a boundary at that boundary, the one its nextRunAt names (issue 44)', async () => {
    const account = await store.createAccount({ name: 'Shop' });
    const monitor = await store.createMonitor({
      accountId: account.id,
      name: 'storefront',
      siteId: null,
      schedule: '* * * * *',
      timeZone: 'UTC',
      suspend: false,
      historyLimit: 10,
      compare: { threshold: 0.001, baseline: 'accepted', pixelTolerance: 0.1 },
      pages: [{ name: 'home', url: 'https://example.com/', removeAds: false }],
    });
    const nextRunAt = monitorView(monitor).nextRunAt!;
    const boundary = new Date(nextRunAt);
    const minuteBefore = new Date(boundary.getTime() - 60_000).toISOString();
    // The next tick comes just after the boundary.
    clock = new Date(boundary.getTime() + 1000);
    await service.tick();
    expect(queued).to.include(nextRunAt);
    expect(queued, 'a boundary before the monitor existed').not.to.include(minuteBefore);
    expect(queued).to.include(new Date(boundary.getTime() + 60_000).toISOString());
  });
});

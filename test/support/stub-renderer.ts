/**
 * A stand-in for a renderer that spends its time waiting, not rendering: the real renderer server
 * (services/renderer/src/server.ts, so it reports its load exactly like a real one) over a Renderer
 * whose capture holds a slot of the real admission control for `delayMs()` and returns a 1x1 PNG.
 * Tests of balancing and draining use it where Chromium adds nothing but time, and the cluster
 * bench runs a hundred of them to size the API's dispatch past what one machine can render.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { PNG } from 'pngjs';
import { createAdmission } from '../../services/renderer/src/admission.ts';
import type { CaptureResult, Renderer } from '../../services/renderer/src/renderer.ts';
import { startRendererService, type RendererService } from './renderer-service.ts';

export interface StubRendererOptions {
  capacity: number;
  queueLimit?: number;
  /** How long each capture holds its slot. */
  delayMs: () => number;
}

const ONE_PIXEL = (() => {
  const png = new PNG({ width: 1, height: 1 });
  png.data.fill(255);
  return PNG.sync.write(png);
})();

export interface StubRenderer extends Renderer {
  /** Captures this renderer has finished. */
  completed(): number;
}

export function createStubRenderer(options: StubRendererOptions): StubRenderer {
  const admission = createAdmission(options.capacity, options.queueLimit ?? options.capacity * 4);
  let completed = 0;
  return {
    async capture(_request, captureOptions = {}): Promise<CaptureResult> {
      const started = performance.now();
      const signal = captureOptions.signal ?? new AbortController().signal;
      const slot = await admission.acquire(signal);
      try {
        await sleep(options.delayMs(), undefined, { signal });
      } finally {
        slot.release(performance.now() - started);
      }
      completed += 1;
      // waitMs carries the whole time spent here, queue included, so that a caller can subtract it.
      return { image: ONE_PIXEL, format: 'png', width: 1, height: 1, fileSize: ONE_PIXEL.byteLength, truncated: false, waitMs: Math.round(performance.now() - started) };
    },
    isReady: () => true,
    stats: () => ({ capacity: options.capacity, inFlight: admission.running(), queued: admission.queued(), browserRestarts: 0, browserCrashes: 0 }),
    completed: () => completed,
    close: async () => undefined,
  };
}

export interface StubRendererService extends RendererService {
  renderer: StubRenderer;
}

export async function startStubRenderer(options: StubRendererOptions): Promise<StubRendererService> {
  const renderer = createStubRenderer(options);
  return { ...(await startRendererService(renderer)), renderer };
}

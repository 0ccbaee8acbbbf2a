/**
 * Capture metrics, recorded wherever the Chromium pool runs: in the renderer service, or inside the
 * API when it renders in-process. Never both for one capture, so sums across jobs count each once.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { HttpError } from '../../../lib/errors.ts';
import { createLatencyHistogram, followTotal, startTracedTimer } from '../../../lib/metrics.ts';
import { PROFILE_NAMES } from './capture/profiles.ts';
import type { CaptureOptions, CaptureRequest, CaptureResult, Renderer } from './renderer.ts';

/**
 * success; timeout (408); rejected: refused before rendering (429 full, 403 blocked, 400, 503
 * shutting down); cancelled: the caller went away; error: anything else (500).
 */
export const CAPTURE_OUTCOMES = ['success', 'timeout', 'error', 'rejected', 'cancelled'] as const;
export type CaptureOutcome = (typeof CAPTURE_OUTCOMES)[number];

const PROFILE_LABEL = ['profile'] as const;
const CAPTURE_LABELS = ['profile', 'outcome'] as const;

/** Registers the capture metrics in `registry` and returns a Renderer that records every capture. */
export function instrumentRenderer(renderer: Renderer, registry: Registry): Renderer {
  // With the trace id of a traced capture as an exemplar (lib/metrics.ts).
  const captureDuration = createLatencyHistogram(
    {
      name: 'viewfinder_capture_duration_seconds',
      help: 'Time a capture took in the renderer, from admission (queue included) to PNG, by profile and outcome.',
      labelNames: CAPTURE_LABELS,
      buckets: [0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 8, 12, 20, 30, 45, 60],
    },
    registry,
  );
  const captureWait = new Histogram({
    name: 'viewfinder_capture_wait_seconds',
    help: 'Time a successful capture waited between the page load event and the screenshot (the wait option or the smart wait).',
    labelNames: PROFILE_LABEL,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 3, 4, 6, 8, 10],
    registers: [registry],
  });
  const pngBytes = new Histogram({
    name: 'viewfinder_capture_png_bytes',
    help: 'Size of the image of a successful capture, in bytes (PNG unless the request chose jpeg or webp).',
    labelNames: PROFILE_LABEL,
    buckets: [10e3, 30e3, 100e3, 300e3, 1e6, 3e6, 10e6, 30e6, 100e6],
    registers: [registry],
  });
  // Every series exists from the start, so that rate() and the alerts see the first capture.
  for (const profile of PROFILE_NAMES) {
    for (const outcome of CAPTURE_OUTCOMES) captureDuration.zero({ profile, outcome });
    captureWait.zero({ profile });
    pngBytes.zero({ profile });
  }
  registerStatsMetrics(renderer, registry);

  return {
    isReady: () => renderer.isReady(),
    stats: () => renderer.stats(),
    close: () => renderer.close(),
    async capture(request: CaptureRequest, options: CaptureOptions = {}): Promise<CaptureResult> {
      const stopTimer = startTracedTimer(captureDuration, { profile: request.quality });
      try {
        const result = await renderer.capture(request, options);
        stopTimer({ outcome: 'success' });
        captureWait.observe({ profile: request.quality }, result.waitMs / 1000);
        pngBytes.observe({ profile: request.quality }, result.fileSize);
        return result;
      } catch (err) {
        stopTimer({ outcome: outcomeOf(err, options.signal) });
        throw err;
      }
    },
  };
}

export function outcomeOf(err: unknown, signal: AbortSignal | undefined): CaptureOutcome {
  if (signal?.aborted) return 'cancelled';
  if (!(err instanceof HttpError)) return 'error';
  if (err.status === 408) return 'timeout';
  if (err.status < 500 || err.status === 503) return 'rejected';
  return 'error';
}

/** Gauges and counters read from renderer.stats() at scrape time. */
function registerStatsMetrics(renderer: Renderer, registry: Registry): void {
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  gauge('viewfinder_render_queue_depth', 'Captures admitted and waiting for a browser slot.', () => renderer.stats().queued);
  gauge('viewfinder_render_in_flight', 'Captures rendering now.', () => renderer.stats().inFlight);
  gauge('viewfinder_render_capacity', 'Captures that can render at once.', () => renderer.stats().capacity);

  const counter = (name: string, help: string, read: () => number) => {
    const advance = followTotal(read);
    return new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        advance((by) => this.inc(by));
      },
    });
  };
  counter('viewfinder_browser_restarts_total', 'Chromium launches after the first, for any reason.', () => renderer.stats().browserRestarts);
  counter('viewfinder_browser_crashes_total', 'Chromium exits nobody asked for.', () => renderer.stats().browserCrashes);
}

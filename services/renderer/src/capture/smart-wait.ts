import { TimeoutError, type Page } from 'puppeteer-core';
import type { NetworkMonitor } from './network-monitor.ts';
import { waitForPageCalm, type CalmReport } from './readiness-probe.ts';
import { phase } from './phase-spans.ts';

export interface SmartWaitSettings {
  /** Hard cap (SMART_WAIT_MAX_MS): when reached, the capture happens anyway. */
  maxMs: number;
  /** Frames without any DOM change or layout shift before the page counts as stable. */
  calmFrames: number;
  /** Once everything else is done, how long endless DOM churn is tolerated before capturing anyway. */
  churnToleranceMs: number;
}

/** Longest one in-page check runs before the network is looked at again; above the churn tolerance. */
const CHECK_SLICE_MS = 1500;

export interface SmartWaitOutcome extends CalmReport {
  /** True when the cap ended the wait. */
  cappedAt?: number;
}

/**
 * Waits until the page is visually complete: network quiet (network-monitor.ts) and every in-page
 * condition of readiness-probe.ts, holding together. If a request starts while the page looks calm,
 * the page is not done: wait again. Ends at `deadline` (performance.now() clock) regardless.
 */
/** renderer.smart_wait when tracing is on (phase-spans.ts). */
export const smartWait = phase('renderer.smart_wait', untracedSmartWait);

async function untracedSmartWait(
  page: Page,
  network: NetworkMonitor,
  settings: SmartWaitSettings,
  deadline: number,
  wholeDocument: boolean,
): Promise<SmartWaitOutcome> {
  let report: CalmReport = { settled: false, calm: false, pending: ['network'] };
  while (performance.now() < deadline) {
    if (!(await network.waitForQuiet(deadline))) break;
    const activityBefore = network.lastActivity;
    const options = {
      calmFrames: settings.calmFrames,
      // In slices, so that what the network shows (a request turning into a hang) is re-read.
      timeoutMs: Math.max(0, Math.min(CHECK_SLICE_MS, deadline - performance.now())),
      wholeDocument,
      churnToleranceMs: settings.churnToleranceMs,
      requireLoadEvent: !network.hasLongRequests(),
    };
    // Every frame must be calm: an iframe that paints late is part of the picture too.
    const reports = await Promise.all(page.frames().map((frame) => frame.evaluate(waitForPageCalm, options).catch(ignoreGoneFrame)));
    const settled = reports.filter((frameReport): frameReport is CalmReport => frameReport !== undefined);
    if (settled.length === 0) continue; // the main document itself was replaced: wait for the new one
    report = {
      settled: settled.every((frameReport) => frameReport.settled),
      calm: settled.every((frameReport) => frameReport.calm),
      pending: settled.flatMap((frameReport) => frameReport.pending),
    };
    if (report.settled && network.lastActivity === activityBefore && network.pending() === 0) return report;
  }
  return { ...report, settled: false, calm: false, cappedAt: deadline };
}

/** Resolves once the load event has fired, or at `deadline`; true when it fired. */
export async function waitForLoadEvent(page: Page, deadline: number): Promise<boolean> {
  const timeout = Math.max(1, Math.round(deadline - performance.now()));
  try {
    // Polled on animation frames: a page timer here would count as the page's own pending work.
    await page.waitForFunction(() => document.readyState === 'complete', { polling: 'raf', timeout });
    return true;
  } catch (err) {
    if (err instanceof TimeoutError) return false;
    throw err;
  }
}

/** A frame that navigated or went away while being checked has nothing left to wait for. */
function ignoreGoneFrame(err: unknown): undefined {
  if (/Execution context was destroyed|Cannot find context|detached|Target closed/i.test(String((err as Error)?.message))) return undefined;
  throw err;
}

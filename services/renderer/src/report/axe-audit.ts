/**
 * axe-core's violations on the page as it was pictured, only when a report asks for them. The
 * script is read from node_modules the first time it is needed (axe-core must then be a runtime
 * dependency) and evaluated through DevTools, so the page's CSP stays as it is. The run is bounded
 * by AXE_TIMEOUT_MS: past it the report says the audit did not finish, and the capture goes on.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'puppeteer-core';
import { sleep } from '../capture/sleep.ts';
import { boundedMessage } from './bounded.ts';
import { AXE_TIMEOUT_MS, MAX_AXE_NODES, MAX_AXE_VIOLATIONS, type AxeViolation, type PageReport } from './page-report.ts';

let axeSource: Promise<string> | undefined;

function loadAxe(): Promise<string> {
  axeSource ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  return axeSource;
}

interface RawViolation {
  id: string;
  impact: AxeViolation['impact'] | undefined;
  help: string;
  nodes: { target: unknown[] }[];
}

export async function auditAccessibility(page: Page, timeoutMs = AXE_TIMEOUT_MS): Promise<NonNullable<PageReport['accessibility']>> {
  const run = (async () => {
    await page.evaluate(await loadAxe());
    return page.evaluate(async () => {
      const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: RawViolation[] }> } }).axe;
      // No preload: axe would fetch the page's stylesheets again for one rule (css-orientation-lock).
      const result = await axe.run(document, { resultTypes: ['violations'], preload: false });
      return result.violations.map(({ id, impact, help, nodes }) => ({ id, impact, help, nodes: nodes.map((node) => ({ target: node.target })) }));
    });
  })();
  run.catch(() => undefined);
  const timer = new AbortController();
  try {
    const violations = await Promise.race([run, sleep(timeoutMs, timer.signal).then(() => undefined, () => undefined)]);
    if (violations === undefined) return { error: `the accessibility audit did not finish within ${timeoutMs} ms` };
    return {
      violations: {
        total: violations.length,
        items: violations.slice(0, MAX_AXE_VIOLATIONS).map(({ id, impact, help, nodes }) => ({
          id,
          impact: impact ?? null,
          help: boundedMessage(help),
          count: nodes.length,
          targets: nodes.slice(0, MAX_AXE_NODES).map((node) => boundedMessage(node.target.map(String).join(' '))),
        })),
      },
    };
  } catch (err) {
    return { error: boundedMessage(`the accessibility audit failed: ${String((err as Error)?.message ?? err).split('\n')[0]}`) };
  } finally {
    timer.abort();
  }
}

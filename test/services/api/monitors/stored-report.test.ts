import { expect } from 'chai';
import type { PageReport } from '../../../../services/renderer/src/report/page-report.ts';
import { reportForStorage, STORED_REPORT_BYTES } from '../../../../services/api/src/monitors/stored-report.ts';

/** A report at the renderer's bounds: every list full, every URL and message as long as kept. */
function reportAtBounds(): PageReport {
  const url = (i: number) => `https://shop.example.com/${String(i).padStart(6, '0')}/${'a'.repeat(2030)}`;
  const entries = (n: number) => ({ total: n * 1000, items: Array.from({ length: n }, (_, i) => ({ level: 'error' as const, kind: 'console' as const, message: `${i} ${'x'.repeat(995)}`, url: url(i), line: i })) });
  const vital = { value: 100, unit: 'ms' as const, rating: 'good' as const };
  return {
    document: { url: url(0), status: 200, redirects: [] },
    console: { errors: entries(50), warnings: entries(50), cspReportOnly: entries(50), browser: entries(50) },
    failedRequests: { total: 5000, items: Array.from({ length: 100 }, (_, i) => ({ url: url(i), type: 'script', reason: 'http' as const, status: 500 })) },
    vitals: { LCP: vital, CLS: { value: 0, unit: 'score', rating: 'good' }, FCP: vital, TTFB: vital, TBT: vital },
    loadTimeMs: 1200,
    weight: { requests: 600, bytes: 1_000_000, byType: { script: { requests: 600, bytes: 1_000_000 } } },
    timeline: { total: 600, items: Array.from({ length: 500 }, (_, i) => ({ url: url(i), type: 'script', startMs: i, durationMs: 10, status: 200, bytes: 1000 })) },
    text: {
      page: { text: 'p'.repeat(100_000), truncated: false },
      selectors: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`#s${i}`, { text: 's'.repeat(10_000), truncated: false }])),
    },
  };
}

describe("a run's stored report (issue #40): within a MongoDB document's room", () => {
  it('keeps a report at the bounds under STORED_REPORT_BYTES: fewer first items of each list, their totals unchanged, texts cut and marked', () => {
    const report = reportAtBounds();
    expect(Buffer.byteLength(JSON.stringify(report)), 'the fixture is at the bounds').to.be.above(2 * 1024 * 1024);
    const stored = reportForStorage(report);
    expect(Buffer.byteLength(JSON.stringify(stored))).to.be.at.most(STORED_REPORT_BYTES);
    expect(stored.timeline.total).to.equal(600);
    expect(stored.timeline.items).to.deep.equal(report.timeline.items.slice(0, stored.timeline.items.length));
    expect(stored.console.errors.total).to.equal(50_000);
    expect(stored.failedRequests.total).to.equal(5000);
    expect(stored.text?.page?.truncated).to.equal(true);
    expect(report.text?.page?.text.startsWith(stored.text?.page?.text ?? 'missing')).to.equal(true);
    // What is measured stays whole.
    expect(stored.vitals).to.deep.equal(report.vitals);
    expect(stored.document).to.deep.equal(report.document);
  });

  it('leaves an ordinary report as it is', () => {
    const report = reportAtBounds();
    const small: PageReport = { ...report, timeline: { total: 3, items: report.timeline.items.slice(0, 3) }, text: { page: { text: 'Shop', truncated: false } } };
    small.console = { errors: { total: 0, items: [] }, warnings: { total: 0, items: [] }, cspReportOnly: { total: 0, items: [] }, browser: { total: 0, items: [] } };
    small.failedRequests = { total: 0, items: [] };
    expect(reportForStorage(small)).to.equal(small);
  });
});

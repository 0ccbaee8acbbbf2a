import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { checksSchema } from '../../services/api/src/monitors/checks.ts';
import { ajv } from '../../services/api/src/validation.ts';
import { crdAjv } from '../support/crd-ajv.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import { startHealthPages } from '../support/health-pages.ts';
import { startHosted, type HostedHarness } from '../services/api/hosted/support.ts';
import { docSection, runBash } from './doc-sections.ts';

/**
 * docs/monitors.md's "Checks" section, as written: its sh block run with sh, curl and jq against a
 * hosted API on loopback (real Chromium), the checkout URL swapped for a page served here that logs a
 * console error, printing exactly the output the doc shows; and its PageMonitor YAML valid against
 * the CRD and the API's checks schema.
 */
const root = path.join(import.meta.dirname, '..', '..');
const { blocks } = docSection('monitors.md', '## Checks: does the page work?', '## Metrics and alerts');
const CHECKOUT_URL = 'https://shop.example.com/checkout';

describe('docs/monitors.md: Checks, as written (bash, curl, jq, real Chromium)', function () {
  this.timeout(120_000);
  let pages: FixtureServer;
  let hosted: HostedHarness;
  let server: http.Server;
  let origin: string;

  before(async () => {
    pages = await startHealthPages();
    hosted = await startHosted({ monitors: true });
    server = http.createServer(hosted.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await hosted?.close();
    await pages?.close();
  });

  it('creates the monitor with checks, runs it, and prints the verdict the doc shows for a checkout page that logs an error', async () => {
    const index = blocks.findIndex((block) => block.lang === 'sh' && block.code.includes('"checks"'));
    expect(index, 'an sh block creating a monitor with checks').to.be.at.least(0);
    const script = blocks[index]!.code.replaceAll('localhost:3000', origin).replaceAll(CHECKOUT_URL, pages.url('/console-error'));
    expect(script, 'the checkout URL was swapped').to.include(pages.url('/console-error'));
    const result = await runBash(script, { KEY: hosted.fullKey });
    expect(result.stderr).to.equal('');
    expect(result.code).to.equal(0);
    const shown = blocks[index + 1];
    expect(shown?.lang).to.equal('text');
    expect(result.stdout).to.equal(shown!.code);
  });

  it("shows a PageMonitor whose checks the CRD and the API's checks schema both take", () => {
    const yaml = blocks.find((block) => block.lang === 'yaml' && block.code.includes('kind: PageMonitor'));
    expect(yaml, 'a PageMonitor with checks').to.not.equal(undefined);
    const resource = parse(yaml!.code);
    const crd = parse(readFileSync(path.join(root, 'crds', 'pagemonitor.yaml'), 'utf8'));
    const validateResource = crdAjv().compile(crd.spec.versions[0].schema.openAPIV3Schema);
    expect(validateResource(resource), JSON.stringify(validateResource.errors)).to.equal(true);
    const validateChecks = ajv.compile(checksSchema);
    const { checks } = resource.spec.pages[0];
    expect(validateChecks(checks), JSON.stringify(validateChecks.errors)).to.equal(true);
    expect(Object.keys(checks).sort(), 'every check').to.deep.equal(Object.keys(checksSchema.properties).sort());
  });
});

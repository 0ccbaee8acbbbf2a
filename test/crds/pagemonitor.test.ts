import { readFileSync } from 'node:fs';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { crdAjv } from '../support/crd-ajv.ts';
import { ajv } from '../../services/api/src/validation.ts';
import { checksSchema } from '../../services/api/src/monitors/checks.ts';
import { pageSchema } from '../../services/api/src/monitors/api-schema.ts';
import { STEP_ACTIONS, stepsSchema } from '../../services/renderer/src/capture/journey-steps.ts';
import { kubectl } from '../support/k8s-tools.ts';
import { createNamespace, deleteNamespace, testNamespaceName } from '../support/namespaces.ts';
import { skippedWithoutCluster } from '../support/cluster.ts';

/**
 * The PageMonitor CRD: its shape, its schema in ajv, and, when KUBECONFIG points at a real API
 * server (make test starts test/cluster), what that server accepts and refuses: the CEL rules
 * (cron shape, schedules that never fire, siteRef xor account) run only there.
 */
const FILE = path.join(import.meta.dirname, '..', '..', 'crds', 'pagemonitor.yaml');
const crd = parseYaml(readFileSync(FILE, 'utf8'));
const version = crd.spec.versions[0];
const schema = version.schema.openAPIV3Schema;

type Spec = Record<string, unknown>;
const monitor = (name: string, spec: Spec, namespace = 'default') => ({
  apiVersion: 'viewfinder.dev/v1alpha1',
  kind: 'PageMonitor',
  metadata: { name, namespace },
  spec,
});
const page = (name: string, extra: Spec = {}) => ({ name, url: `https://example.com/${name}`, ...extra });
const valid: Spec = { account: 'acct_1', schedule: '*/5 * * * *', pages: [page('home')] };
const withSpec = (changes: Spec): Spec => ({ ...valid, ...changes });

/** The invalid specs and the words the API server's refusal must contain. */
const REFUSED: Array<[string, Spec, RegExp]> = [
  ['a schedule with four fields', withSpec({ schedule: '*/5 * * *' }), /schedule must be a cron expression/],
  ['a schedule with a minute out of range', withSpec({ schedule: '60 * * * *' }), /schedule must be a cron expression/],
  ['a schedule with a step of 0', withSpec({ schedule: '*/0 * * * *' }), /schedule must be a cron expression/],
  ['an unknown macro', withSpec({ schedule: '@reboot' }), /schedule must be a cron expression/],
  ['a schedule that never fires (30 February)', withSpec({ schedule: '0 0 30 2 *' }), /never fires/],
  ['a schedule that never fires (31 April)', withSpec({ schedule: '0 0 31 APR *' }), /never fires/],
  ['a repeated page name', withSpec({ pages: [page('home'), page('home')] }), /Duplicate value/],
  ['a threshold above 1', withSpec({ compare: { threshold: 1.5 } }), /threshold.*less than or equal to 1/],
  ['a threshold below 0', withSpec({ compare: { threshold: -0.1 } }), /threshold.*greater than or equal to 0/],
  ['a pixel tolerance above 1', withSpec({ compare: { pixelTolerance: 2 } }), /pixelTolerance/],
  ['an unknown baseline', withSpec({ compare: { baseline: 'first' } }), /baseline.*Unsupported value/],
  ['21 pages (the limit is 20)', withSpec({ pages: Array.from({ length: 21 }, (_, i) => page(`p${i}`)) }), /pages.*must have at most 20 items/],
  ['no pages', withSpec({ pages: [] }), /pages.*should have at least 1 items/],
  ['a page name that is not a DNS label', withSpec({ pages: [page('Home_Page')] }), /name.*should match/],
  ['a URL that is not http(s)', withSpec({ pages: [{ name: 'home', url: 'file:///etc/passwd' }] }), /url.*should match/],
  ['fullPage with selector', withSpec({ pages: [page('home', { fullPage: true, selector: 'main' })] }), /fullPage and selector cannot be combined/],
  ['a wait beyond 8000 ms', withSpec({ pages: [page('home', { wait: 9000 })] }), /wait.*less than or equal to 8000/],
  ['an ignore region without a size', withSpec({ pages: [page('home', { ignoreRegions: [{ left: 0, top: 0, width: 0, height: 10 }] })] }), /width.*greater than or equal to 1/],
  ['both siteRef and account', withSpec({ siteRef: 'shop' }), /exactly one of siteRef/],
  ['neither siteRef nor account', { schedule: '@daily', pages: [page('home')] }, /exactly one of siteRef/],
  ['a historyLimit of 0', withSpec({ historyLimit: 0 }), /historyLimit.*greater than or equal to 1/],
  ['a time zone with a space', withSpec({ timeZone: 'Europe/New York' }), /timeZone.*should match/],
  ['a kind of resource to block that does not exist', withSpec({ pages: [page('home', { blockResources: ['stylesheets'] })] }), /blockResources.*Unsupported value/],
  ['a latitude beyond 90', withSpec({ pages: [page('home', { geolocation: { latitude: 91, longitude: 0 } })] }), /latitude.*less than or equal to 90/],
  ['credentials without the Secret\'s name', withSpec({ pages: [page('home', { credentialsSecretRef: {} })] }), /credentialsSecretRef.name.*Required/],
  // issue 40: checks, with the management API's bounds (checks.ts)
  ['an expected status out of range', withSpec({ pages: [page('home', { checks: { status: [700] } })] }), /checks.status\[0\].*less than or equal to 599/],
  ['a negative bound on axe violations', withSpec({ pages: [page('home', { checks: { maxViolations: { serious: -1 } } })] }), /maxViolations.serious.*greater than or equal to 0/],
  ['a text check with nothing to look for', withSpec({ pages: [page('home', { checks: { text: [{ selector: '#buy' }] } })] }), /a text check needs contains or notContains/],
  ['a negative load time', withSpec({ pages: [page('home', { checks: { maxLoadTime: -1 } })] }), /maxLoadTime.*greater than or equal to 0/],
  // issue 41: steps, with the API's bounds (journey-steps.ts)
  ['a fill with both value and valueFrom', withSpec({ pages: [page('home', { steps: [{ action: 'fill', selector: '#q', value: 'a', valueFrom: 'b' }] })] }), /a fill step takes value or valueFrom/],
  ['a step that runs script', withSpec({ pages: [page('home', { steps: [{ action: 'evaluate' }] })] }), /action.*Unsupported value: "evaluate"/],
  ['a step timeout beyond 30 s', withSpec({ pages: [page('home', { steps: [{ action: 'click', selector: '#go', timeout: 60000 }] })] }), /timeout.*less than or equal to 30000/],
  ['51 steps (the limit is 50)', withSpec({ pages: [page('home', { steps: Array.from({ length: 51 }, () => ({ action: 'hover', selector: 'nav' })) })] }), /steps.*must have at most 50 items/],
];

/** The sign-in journey of docs/monitors.md ("Journeys"), and a step of every other action. */
const EVERY_STEP = [
  { action: 'goto', url: 'https://shop.example/login' },
  { action: 'fill', selector: '#user', value: 'ada' },
  { action: 'fill', selector: '#password', valueFrom: 'password' },
  { action: 'press', selector: '#password', key: 'Enter' },
  { action: 'waitFor', url: '*/account*', timeout: 10000 },
  { action: 'select', selector: '#size', value: 'm' },
  { action: 'select', selector: '#sizes', values: ['s', 'm'] },
  { action: 'check', selector: '#gift' },
  { action: 'uncheck', selector: '#news' },
  { action: 'hover', selector: '#menu' },
  { action: 'click', selector: '#orders' },
  { action: 'scroll', y: 600 },
  { action: 'scroll', selector: '#footer' },
  { action: 'waitFor', selector: '.spinner', state: 'hidden' },
  { action: 'waitFor', networkIdle: true },
  { action: 'capture', name: 'orders' },
];

/** Every check and form the API takes (docs/monitors.md, "Checks"). */
const EVERY_CHECK = {
  status: [200, 304],
  maxConsoleErrors: { max: 0, ignore: ['*ResizeObserver loop*'] },
  maxFailedRequests: { max: 2, ignore: ['*://*.analytics.example/*'], byType: { stylesheet: 0, script: 0 } },
  webVitals: { LCP: 'good', CLS: 0.1, FCP: 'needs-improvement', TTFB: 800, TBT: 300 },
  maxViolations: { critical: 0, serious: 0, skipRules: ['color-contrast'] },
  text: [{ selector: '#buy', contains: 'Add to cart' }, { notContains: 'Error' }],
  maxLoadTime: 5000,
};

const ACCEPTED: Array<[string, Spec]> = [
  ['every five minutes', valid],
  [
    'a page behind a login, with every visit option and its credentials in a Secret',
    withSpec({
      pages: [
        page('account', {
          userAgent: 'ExampleBot/1.0',
          locale: 'fr-FR',
          timezone: 'Europe/Paris',
          geolocation: { latitude: 48.85, longitude: 2.35, accuracy: 10 },
          click: '#more',
          injectCss: '.chat { display: none }',
          injectJs: 'document.title = "x"',
          blockResources: ['media', 'fonts'],
          blockUrls: ['*://*.doubleclick.net/*'],
          credentialsSecretRef: { name: 'shop-login' },
        }),
      ],
    }),
  ],
  ['weekdays at 9, by name, in a time zone', withSpec({ schedule: '0 9 * * MON-FRI', timeZone: 'Europe/Paris' })],
  ['a list, a range with a step, and a macro', withSpec({ schedule: '0,30 8-18/2 1,15 * *' })],
  ['@daily with a site', { siteRef: 'shop', schedule: '@daily', pages: [page('home')] }],
  [
    'every page option',
    withSpec({
      suspend: true,
      historyLimit: 100,
      compare: { threshold: 0, baseline: 'previous', pixelTolerance: 0 },
      pages: [
        page('home', {
          quality: 'retina',
          fullPage: true,
          removeAds: false,
          wait: 1000,
          waitForSelector: '#app',
          hideSelectors: ['.clock'],
          darkMode: true,
          reducedMotion: true,
          ignoreRegions: [{ left: 0, top: 0, width: 200, height: 40 }],
        }),
        page('logo', { selector: 'header img' }),
      ],
    }),
  ],
  ['20 pages', withSpec({ pages: Array.from({ length: 20 }, (_, i) => page(`p${i}`)) })],
  ['every check, in every form', withSpec({ pages: [page('home', { checks: EVERY_CHECK }), page('plain', { checks: { maxConsoleErrors: 0, maxFailedRequests: 0 } })] })],
  ['a journey of every action, its secret from the Secret\'s values', withSpec({ pages: [page('account', { steps: EVERY_STEP, credentialsSecretRef: { name: 'shop-login' } })] })],
];

describe('PageMonitor CRD', () => {
  it('is a namespaced viewfinder.dev/v1alpha1 resource, short name vfmon, in the viewfinder category, with a status subresource', () => {
    expect(crd.metadata.name).to.equal('pagemonitors.viewfinder.dev');
    expect(crd.spec).to.include({ group: 'viewfinder.dev', scope: 'Namespaced' });
    expect(crd.spec.names).to.deep.include({ kind: 'PageMonitor', plural: 'pagemonitors', singular: 'pagemonitor', shortNames: ['vfmon'], categories: ['viewfinder'] });
    expect(version).to.include({ name: 'v1alpha1', served: true, storage: true });
    expect(version.subresources).to.deep.equal({ status: {} });
  });

  it('prints schedule, last run, changed, largest diff and age', () => {
    const columns = Object.fromEntries(version.additionalPrinterColumns.filter((c: { priority?: number }) => !c.priority).map((c: { name: string }) => [c.name, c]));
    expect(Object.keys(columns)).to.deep.equal(['Schedule', 'Last Run', 'Changed', 'Largest Diff', 'Age']);
    expect(columns.Schedule).to.include({ jsonPath: '.spec.schedule' });
    expect(columns['Last Run']).to.include({ type: 'date', jsonPath: '.status.lastRunTime' });
    expect(columns.Changed).to.include({ jsonPath: '.status.conditions[?(@.type=="Changed")].status' });
    expect(columns['Largest Diff']).to.include({ type: 'number', jsonPath: '.status.largestDiffRatio' });
  });

  it('declares the fields of the issue', () => {
    expect(Object.keys(schema.properties.spec.properties).sort()).to.deep.equal(['account', 'compare', 'historyLimit', 'pages', 'schedule', 'siteRef', 'suspend', 'timeZone']);
    expect(Object.keys(schema.properties.spec.properties.pages.items.properties).sort()).to.deep.equal(
      [
        ...['darkMode', 'fullPage', 'hideSelectors', 'ignoreRegions', 'name', 'quality', 'reducedMotion', 'removeAds', 'selector', 'url', 'wait', 'waitForSelector'],
        // issue 30: the visit options, and a page behind a login's Secret
        ...['userAgent', 'locale', 'timezone', 'geolocation', 'click', 'injectCss', 'injectJs', 'blockResources', 'blockUrls', 'credentialsSecretRef'],
        // issue 40
        'checks',
        // issue 41
        'steps',
      ].sort(),
    );
    expect(Object.keys(schema.properties.status.properties).sort()).to.deep.equal(
      ['conditions', 'largestDiffRatio', 'lastRunId', 'lastRunTime', 'monitorId', 'nextRunTime', 'observedGeneration', 'pages'].sort(),
    );
  });

  it("declares checks with the management API's checks (checks.ts): the same fields and bounds, a form that is a count or an object left to the API", () => {
    const crdChecks = schema.properties.spec.properties.pages.items.properties.checks;
    /** The JSON Schema keywords that bound a value; descriptions and the API's own forms aside. */
    const bounds = (node: Record<string, unknown>): unknown => {
      if ('anyOf' in node) return 'checked by the API';
      if (node['x-kubernetes-preserve-unknown-fields'] === true) return 'checked by the API';
      const kept: Record<string, unknown> = {};
      for (const key of ['type', 'minimum', 'maximum', 'minItems', 'maxItems', 'minLength', 'maxLength', 'enum']) if (key in node) kept[key] = node[key];
      if (node.items) kept.items = bounds(node.items as Record<string, unknown>);
      if (node.properties) kept.properties = Object.fromEntries(Object.entries(node.properties as Record<string, Record<string, unknown>>).map(([name, child]) => [name, bounds(child)]));
      return kept;
    };
    // The text item's anyOf (contains or notContains) is a CEL rule in the CRD.
    const apiChecks = structuredClone(checksSchema) as unknown as { properties: { text: { items: Record<string, unknown> } } };
    delete apiChecks.properties.text.items.anyOf;
    expect(bounds(crdChecks)).to.deep.equal(bounds(apiChecks as unknown as Record<string, unknown>));
    expect(crdChecks.properties.text.items['x-kubernetes-validations']).to.deep.equal([{ rule: 'has(self.contains) || has(self.notContains)', message: 'a text check needs contains or notContains' }]);
  });

  it('takes the checks the API takes: every accepted example passes checks.ts', () => {
    const validate = ajv.compile(checksSchema);
    for (const [label, spec] of ACCEPTED) {
      for (const { checks } of spec.pages as Array<{ checks?: unknown }>) if (checks !== undefined) expect(validate(checks), `${label}: ${JSON.stringify(validate.errors)}`).to.equal(true);
    }
  });

  it("declares steps with the API's steps (journey-steps.ts): the same actions, the fields of each with their bounds, what each action takes left to the API", () => {
    const crdSteps = schema.properties.spec.properties.pages.items.properties.steps;
    expect(crdSteps).to.deep.include({ type: 'array', maxItems: stepsSchema.maxItems });
    const fields = crdSteps.items.properties as Record<string, Record<string, unknown>>;
    expect(fields.action!.enum).to.deep.equal([...STEP_ACTIONS]);
    expect(fields.timeout).to.deep.include({ minimum: stepsSchema.items.properties.timeout.minimum, maximum: stepsSchema.items.properties.timeout.maximum });
    // Every field of every action is declared, with the API's bounds (the loosest, where two actions share a name).
    const BOUNDS = ['minimum', 'maximum', 'minItems', 'maxItems', 'pattern', 'enum'];
    for (const rule of stepsSchema.items.allOf) {
      for (const [name, field] of Object.entries(rule.then.properties as Record<string, Record<string, unknown> | true>)) {
        if (field === true) continue;
        const crdField = fields[name];
        expect(crdField, `steps[].${name} (${rule.if.properties.action.const})`).to.be.an('object');
        for (const bound of BOUNDS) if (bound in field && typeof field[bound] !== 'object') expect(crdField![bound], `${name}.${bound}`).to.equal(field[bound]);
        if (typeof field.maxLength === 'number') expect(crdField!.maxLength as number, `${name}.maxLength`).to.be.at.least(field.maxLength);
      }
    }
    expect(Object.keys(fields).sort()).to.deep.equal([...new Set(stepsSchema.items.allOf.flatMap((rule) => Object.keys(rule.then.properties)))].sort());
  });

  it('takes the steps the API takes: every accepted journey passes the API\'s page schema', () => {
    const validate = ajv.compile(pageSchema.properties.steps);
    for (const [label, spec] of ACCEPTED) {
      for (const { steps } of spec.pages as Array<{ steps?: unknown }>) if (steps !== undefined) expect(validate(steps), `${label}: ${JSON.stringify(validate.errors)}`).to.equal(true);
    }
  });

  it('keeps per-page failingChecks in status, bounded', () => {
    const failing = schema.properties.status.properties.pages.items.properties.failingChecks;
    expect(failing).to.deep.include({ type: 'array', maxItems: 20 });
    expect(Object.keys(failing.items.properties)).to.deep.equal(['check', 'measured', 'bound', 'message']);
  });

  describe('schema (ajv: the parts that are JSON Schema)', () => {
    const validate = crdAjv().compile(schema);

    it('fills in the defaults: not suspended, 10 runs kept, the accepted baseline, a 0.1 % threshold, tolerance 0.1', () => {
      const object = monitor('m', { ...valid });
      expect(validate(object), JSON.stringify(validate.errors)).to.equal(true);
      expect(object.spec).to.deep.include({ suspend: false, historyLimit: 10, compare: { threshold: 0.001, baseline: 'accepted', pixelTolerance: 0.1 } });
    });

    for (const [label, spec] of ACCEPTED) {
      it(`accepts ${label}`, () => {
        expect(validate(monitor('m', spec)), JSON.stringify(validate.errors)).to.equal(true);
      });
    }
  });

  describe('on the real API server (KUBECONFIG)', function () {
    this.timeout(120_000);
    if (skippedWithoutCluster('the CRD on a real API server')) return;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromDefault();
    const namespace = testNamespaceName();

    before(async () => {
      const applied = kubectl(['apply', '-f', FILE]);
      expect(applied.status, applied.output).to.equal(0);
      const established = kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/pagemonitors.viewfinder.dev']);
      expect(established.status, established.output).to.equal(0);
      await createNamespace(kubeConfig, namespace);
    });
    after(() => deleteNamespace(kubeConfig, namespace));

    // JSON, not YAML: kubectl reads YAML 1.1, where the scroll step's unquoted y would be a key named "true".
    const apply = (name: string, spec: Spec, args: string[] = []) => kubectl(['apply', '--namespace', namespace, ...args, '-f', '-'], JSON.stringify(monitor(name, spec, namespace)));

    for (const [label, spec] of ACCEPTED) {
      it(`accepts ${label}`, () => {
        const { status, output } = apply('accepted', spec, ['--dry-run=server']);
        expect(status, output).to.equal(0);
      });
    }

    for (const [label, spec, message] of REFUSED) {
      it(`refuses ${label}`, () => {
        const { status, output } = apply('refused', spec, ['--dry-run=server']);
        expect(status, output).to.not.equal(0);
        expect(output).to.match(message);
      });
    }

    it('refuses an unknown page option (strict field validation), and names it', () => {
      const { status, output } = apply('refused', withSpec({ pages: [page('home', { zoom: 2 })] }), ['--dry-run=server']);
      expect(status, output).to.not.equal(0);
      expect(output).to.match(/unknown field "spec\.pages\[0\]\.zoom"/);
    });

    it('keeps account immutable', () => {
      expect(apply('immutable', valid).status).to.equal(0);
      const { status, output } = apply('immutable', withSpec({ account: 'acct_2' }));
      expect(status, output).to.not.equal(0);
      expect(output).to.match(/account is immutable/);
    });

    it('is listed by its short name and its category, with the printer columns', () => {
      expect(apply('listed', withSpec({ schedule: '0 9 * * MON-FRI' })).status).to.equal(0);
      for (const resource of ['vfmon', 'viewfinder']) {
        const { status, stdout, output } = kubectl(['get', resource, '--namespace', namespace]);
        expect(status, output).to.equal(0);
        expect(stdout.split('\n')[0]).to.match(/^NAME\s+SCHEDULE\s+LAST RUN\s+CHANGED\s+LARGEST DIFF\s+AGE$/);
        expect(stdout).to.match(/listed\s+0 9 \* \* MON-FRI/);
      }
    });

    it('takes a status through the status subresource and prints it', () => {
      expect(apply('printed', valid).status).to.equal(0);
      const status = {
        lastRunTime: '2026-01-01T10:00:00Z',
        largestDiffRatio: 0.0421,
        conditions: [{ type: 'Changed', status: 'True', reason: 'PageChanged', message: 'home: 4.21 %', lastTransitionTime: '2026-01-01T10:00:00Z', observedGeneration: 1 }],
        pages: [{ name: 'home', diffRatio: 0.0421, changed: true, regions: [{ left: 0, top: 10, width: 100, height: 20 }] }],
      };
      const patched = kubectl(['patch', 'vfmon', 'printed', '--namespace', namespace, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
      expect(patched.status, patched.output).to.equal(0);
      const { stdout } = kubectl(['get', 'vfmon', 'printed', '--namespace', namespace, '--no-headers']);
      expect(stdout).to.match(/^printed\s+\*\/5 \* \* \* \*\s+\S+\s+True\s+0\.0421\s+\S+/);
    });
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { crdAjv } from '../support/crd-ajv.ts';

/** The CRDs as written: their structure, and their schemas checked against sample objects with ajv. */
interface Crd {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; singular: string; shortNames: string[]; categories: string[] };
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      subresources: { status: object };
      additionalPrinterColumns: Array<{ name: string; jsonPath: string; type: string }>;
      schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, unknown> }; status: { properties: Record<string, unknown> } } } };
    }>;
  };
}

const load = (file: string) => parseYaml(readFileSync(path.join(import.meta.dirname, '..', '..', 'crds', file), 'utf8')) as Crd;

describe('CRDs', () => {
  const site = load('site.yaml');
  const apiKey = load('apikey.yaml');

  for (const [crd, kind, plural, shortName] of [
    [site, 'Site', 'sites', 'vfsite'],
    [apiKey, 'ApiKey', 'apikeys', 'vfkey'],
  ] as const) {
    describe(kind, () => {
      const version = crd.spec.versions[0];

      it('is a namespaced apiextensions.k8s.io/v1 CRD in viewfinder.dev, served and stored as v1alpha1 only', () => {
        expect(crd).to.deep.include({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.viewfinder.dev` } });
        expect(crd.spec).to.include({ group: 'viewfinder.dev', scope: 'Namespaced' });
        expect(crd.spec.versions).to.have.length(1);
        expect(version).to.include({ name: 'v1alpha1', served: true, storage: true });
      });

      it(`has its names, the short name ${shortName} and the viewfinder category`, () => {
        expect(crd.spec.names).to.deep.include({ kind, plural, singular: kind.toLowerCase(), shortNames: [shortName], categories: ['viewfinder'] });
      });

      it('has a status subresource and the Ready, Site and Age printer columns', () => {
        expect(version?.subresources).to.deep.equal({ status: {} });
        const columns = Object.fromEntries((version?.additionalPrinterColumns ?? []).map((column) => [column.name, column]));
        expect(columns.Ready).to.include({ type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' });
        expect(columns.Site?.type).to.equal('string');
        expect(columns.Age).to.include({ type: 'date', jsonPath: '.metadata.creationTimestamp' });
      });
    });
  }

  it('declares exactly the fields of the issue', () => {
    const fields = (crd: Crd, part: 'spec' | 'status') => Object.keys(crd.spec.versions[0]?.schema.openAPIV3Schema.properties[part].properties ?? {}).sort();
    expect(fields(site, 'spec')).to.deep.equal(['account', 'allowedDomains', 'storage']);
    expect(fields(site, 'status')).to.deep.equal(['conditions', 'observedGeneration', 'siteId', 'storage']);
    expect(fields(apiKey, 'spec')).to.deep.equal(['account', 'restrictDomains', 'rotation', 'secretName', 'siteRef']);
    expect(fields(apiKey, 'status')).to.deep.equal(['conditions', 'keyId', 'lastRotatedAt', 'observedGeneration', 'prefix', 'secretName']);
  });

  describe('schemas (ajv)', () => {
    const validator = (crd: Crd) => crdAjv().compile(crd.spec.versions[0]?.schema.openAPIV3Schema as object);
    const validSite = validator(site);
    const validApiKey = validator(apiKey);
    const siteWith = (spec: object) => ({ apiVersion: 'viewfinder.dev/v1alpha1', kind: 'Site', metadata: {}, spec });
    const keyWith = (spec: object) => ({ apiVersion: 'viewfinder.dev/v1alpha1', kind: 'ApiKey', metadata: {}, spec });

    it('accepts a Site with host names, a leading "*." wildcard, IPv4 and punycode', () => {
      expect(validSite(siteWith({ account: 'acct_1', allowedDomains: ['example.com', '*.example.org', 'Shop.Example.NET.', '127.0.0.1', 'xn--bcher-kva.de'] })), JSON.stringify(validSite.errors)).to.equal(true);
    });

    for (const domain of ['https://example.com', 'example.com/path', 'example.com:8080', 'user@example.com', 'a.*.example.com', '-bad.example.com', '', 'exa mple.com']) {
      it(`rejects the allowed domain ${JSON.stringify(domain)}`, () => {
        expect(validSite(siteWith({ account: 'acct_1', allowedDomains: [domain] }))).to.equal(false);
      });
    }

    it('rejects a Site without an account, and unknown types', () => {
      expect(validSite(siteWith({ allowedDomains: [] }))).to.equal(false);
      expect(validSite(siteWith({ account: 'acct_1', allowedDomains: 'example.com' }))).to.equal(false);
    });

    it('defaults allowedDomains to an empty list', () => {
      const object = siteWith({ account: 'acct_1' });
      expect(validSite(object)).to.equal(true);
      expect(object.spec).to.deep.equal({ account: 'acct_1', allowedDomains: [] });
    });

    it('accepts a Site with spec.storage, defaulting region, pathStyle and keyTemplate; refuses one without its Secret, with a bad name or a non-http endpoint (issue #43)', () => {
      const storage = { name: 'archive', endpoint: 'https://s3.eu-west-1.amazonaws.com', bucket: 'acme-shots', credentialsSecretRef: { name: 'bucket-keys' } };
      const object = siteWith({ account: 'acct_1', storage });
      expect(validSite(object), JSON.stringify(validSite.errors)).to.equal(true);
      expect(object.spec).to.deep.equal({ account: 'acct_1', allowedDomains: [], storage: { ...storage, region: 'us-east-1', pathStyle: false, keyTemplate: '{id}.{format}' } });
      const { credentialsSecretRef: _secret, ...withoutSecret } = storage;
      expect(validSite(siteWith({ account: 'acct_1', storage: withoutSecret }))).to.equal(false);
      expect(validSite(siteWith({ account: 'acct_1', storage: { ...storage, name: 'Archive' } }))).to.equal(false);
      expect(validSite(siteWith({ account: 'acct_1', storage: { ...storage, endpoint: 'ftp://s3.example' } }))).to.equal(false);
    });

    it('accepts a full-access ApiKey and a site ApiKey, and defaults rotation and restrictDomains', () => {
      const full = keyWith({ account: 'acct_1' });
      expect(validApiKey(full)).to.equal(true);
      expect(full.spec).to.deep.equal({ account: 'acct_1', restrictDomains: false, rotation: 0 });
      expect(validApiKey(keyWith({ account: 'acct_1', siteRef: 'storefront', restrictDomains: true, secretName: 'widget-key', rotation: 3 }))).to.equal(true);
    });

    it('rejects a negative or fractional rotation, and a secretName that is not a Kubernetes name', () => {
      expect(validApiKey(keyWith({ account: 'acct_1', rotation: -1 }))).to.equal(false);
      expect(validApiKey(keyWith({ account: 'acct_1', rotation: 1.5 }))).to.equal(false);
      expect(validApiKey(keyWith({ account: 'acct_1', secretName: 'Not_A_Name' }))).to.equal(false);
    });

    it('states in CEL what the schema cannot: immutable account, rotation only raised, restrictDomains needs siteRef, no "*.x" beside "x"', () => {
      const rules = (value: unknown): string[] =>
        typeof value !== 'object' || value === null
          ? []
          : Object.entries(value).flatMap(([key, child]) =>
              key === 'x-kubernetes-validations' ? (child as Array<{ rule: string }>).map((rule) => rule.rule) : rules(child),
            );
      expect(rules(apiKey)).to.include.members(['self == oldSelf', 'self >= oldSelf', "!has(self.restrictDomains) || !self.restrictDomains || has(self.siteRef)"]);
      expect(rules(site)).to.include.members(['self == oldSelf', "self.all(d, !(d.startsWith('*.') && self.exists(e, e == d.substring(2))))"]);
    });
  });
});

/**
 * kubectl and Helm read YAML as 1.1, where an unquoted `y`, `n`, `yes`, `no`, `on` or `off` is a
 * boolean: a schema property `y:` reaches the API server named "true". Every file the cluster gets
 * must read the same in YAML 1.1 as in YAML 1.2, which these tests and the API read it as.
 */
describe('YAML read as kubectl and Helm read it (1.1)', () => {
  const ROOT = path.join(import.meta.dirname, '..', '..');
  const files = [
    ...['site.yaml', 'apikey.yaml', 'pagemonitor.yaml'].flatMap((file) => [`crds/${file}`, `charts/viewfinder/crds/${file}`]),
    'charts/viewfinder/values.yaml',
    'charts/viewfinder/files/prometheus-rules.yaml',
  ];
  for (const file of files) {
    it(`${file} reads the same in YAML 1.1 as in 1.2`, () => {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      expect(parseYaml(text, { version: '1.1' })).to.deep.equal(parseYaml(text, { version: '1.2' }));
    });
  }
});

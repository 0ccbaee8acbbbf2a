import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { waitFor } from '../operator/support.ts';
import { helm, kubectl } from '../support/k8s-tools.ts';
import { createNamespace, deleteNamespace, testNamespaceName } from '../support/namespaces.ts';
import { CHART, REPO, ciValueFiles, defaultValues, mergeValues, readYaml, type Values } from './chart.ts';
import { skippedWithoutCluster } from '../support/cluster.ts';

/**
 * The deploy path a platform team takes, against the real API server KUBECONFIG points at (CI starts
 * test/cluster): kubectl applies crds/ twice, the API server accepts every rendering of the chart in
 * a server-side dry run, and Helm installs, upgrades and uninstalls it. Pods stay Pending there (no
 * kubelet), so the checks are on the objects, not on workloads running.
 */

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> } };

/** What helm uninstall leaves on purpose (the MongoDB Secret, beside the PVC Kubernetes keeps). */
const keptByHelm = (object: Manifest) => object.metadata.annotations?.['helm.sh/resource-policy'] === 'keep';

const manifestsOf = (text: string): Manifest[] =>
  parseAllDocuments(text)
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);

/**
 * The objects as one List for `kubectl -f -`, each in the release's namespace unless it names its
 * own (the Roles in watched namespaces do): kubectl refuses --namespace for a file that mixes them,
 * and ignores the namespace of a cluster-scoped object.
 */
const asList = (objects: Manifest[], namespace: string): string =>
  JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects.map((object) => ({ ...object, metadata: { namespace, ...object.metadata } })) });

/** ServiceMonitor and PrometheusRule come with the Prometheus Operator; a bare cluster gets stand-ins. */
const MONITORING_CRDS = [
  { kind: 'ServiceMonitor', plural: 'servicemonitors' },
  { kind: 'PrometheusRule', plural: 'prometheusrules' },
].map(({ kind, plural }) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.monitoring.coreos.com` },
  spec: {
    group: 'monitoring.coreos.com',
    scope: 'Namespaced',
    names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
}));

describe('the chart on a real API server (KUBECONFIG)', function () {
  this.timeout(300_000);
  if (skippedWithoutCluster('the chart installed on a real API server')) return;

  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  const namespaces: string[] = [];
  const releases: Array<{ release: string; namespace: string }> = [];
  const standIns: string[] = [];

  const newNamespace = async (name = testNamespaceName()) => {
    await createNamespace(kubeConfig, name);
    namespaces.push(name);
    return name;
  };

  /**
   * The values file as it is, except that the namespaces it names (operator.watchNamespaces, the
   * dashboard's) become fresh ones of the test's: a test never writes into a namespace it did not create.
   */
  async function valuesArgs(file: string | undefined, namespace: string): Promise<string[]> {
    const values = (file ? mergeValues(defaultValues(), readYaml(file) as Values) : defaultValues()) as any;
    const args = file ? ['-f', file] : [];
    const watched: string[] = values.operator.watchNamespaces;
    if (watched.length > 0) {
      const replaced = await Promise.all(watched.map((_name, index) => newNamespace(`${namespace}-w${index}`)));
      args.push('--set', `operator.watchNamespaces={${replaced.join(',')}}`);
    }
    if (values.metrics.dashboard.enabled && values.metrics.dashboard.namespace) {
      args.push('--set', `metrics.dashboard.namespace=${await newNamespace(`${namespace}-dash`)}`);
    }
    return args;
  }

  before(async () => {
    for (const crd of MONITORING_CRDS) {
      if (kubectl(['get', 'crd', crd.metadata.name]).status === 0) continue;
      const created = kubectl(['create', '-f', '-'], JSON.stringify(crd));
      expect(created.status, created.output).to.equal(0);
      standIns.push(crd.metadata.name);
    }
    const crds = kubectl(['apply', '-f', `${REPO}crds/`]);
    expect(crds.status, crds.output).to.equal(0);
    const established = kubectl(['wait', '--for=condition=Established', '--timeout=120s', ...[...MONITORING_CRDS.map((crd) => crd.metadata.name), 'sites.viewfinder.dev', 'apikeys.viewfinder.dev', 'pagemonitors.viewfinder.dev'].map((name) => `crd/${name}`)]);
    expect(established.status, established.output).to.equal(0);
  });

  // Each test's namespaces are gone when it ends; a release is left only by a test that failed.
  afterEach(async function () {
    this.timeout(300_000);
    for (const { release, namespace } of releases.splice(0)) helm(['uninstall', release, '--namespace', namespace, '--ignore-not-found']);
    await Promise.all(namespaces.splice(0).map((namespace) => deleteNamespace(kubeConfig, namespace)));
  });

  after(() => {
    for (const name of standIns) kubectl(['delete', 'crd', name, '--ignore-not-found']);
  });

  it("keeps MongoDB's Secret through helm uninstall, so a reinstall gets the password its kept volume was made with", async () => {
    const namespace = await newNamespace();
    const release = `vf${randomBytes(3).toString('hex')}`;
    releases.push({ release, namespace });
    const secret = () => kubectl(['get', 'secret', `${release}-viewfinder-mongodb`, '--namespace', namespace, '-o', 'jsonpath={.data.mongodb-root-password}']);
    expect(helm(['install', release, CHART, '--namespace', namespace]).status).to.equal(0);
    const password = secret().stdout;
    expect(password).to.have.length.above(20);
    const uninstalled = helm(['uninstall', release, '--namespace', namespace]);
    expect(uninstalled.status, uninstalled.output).to.equal(0);
    expect(secret().stdout, 'the Secret survives helm uninstall').to.equal(password);
    const reinstalled = helm(['install', release, CHART, '--namespace', namespace]);
    expect(reinstalled.status, reinstalled.output).to.equal(0);
    expect(secret().stdout, 'the reinstall reads the same password').to.equal(password);
  });

  it('owns replicas: after kubectl scale, helm upgrade (server-side apply) stops on the conflict, and --force-conflicts takes the count back, as the docs say', async () => {
    const namespace = await newNamespace();
    const release = `vf${randomBytes(3).toString('hex')}`;
    releases.push({ release, namespace });
    const values = ['-f', `${CHART}/ci/self-hosted-values.yaml`, '--set', 'renderer.replicas=2'];
    const renderer = `deployment/${release}-viewfinder-renderer`;
    const replicas = () => kubectl(['get', renderer, '--namespace', namespace, '-o', 'jsonpath={.spec.replicas}']).stdout;
    expect(helm(['install', release, CHART, '--namespace', namespace, ...values]).status).to.equal(0);
    expect(kubectl(['scale', renderer, '--namespace', namespace, '--replicas=3']).status).to.equal(0);
    const conflicted = helm(['upgrade', release, CHART, '--namespace', namespace, ...values, '--set', 'renderer.replicas=4']);
    expect(conflicted.status).to.not.equal(0);
    expect(conflicted.output).to.include('conflict with "kubectl" with subresource "scale"').and.include('.spec.replicas');
    const forced = helm(['upgrade', release, CHART, '--namespace', namespace, ...values, '--set', 'renderer.replicas=4', '--force-conflicts']);
    expect(forced.status, forced.output).to.equal(0);
    expect(replicas()).to.equal('4');
    // From then on the chart owns the field again: a plain upgrade goes through.
    const plain = helm(['upgrade', release, CHART, '--namespace', namespace, ...values, '--set', 'renderer.replicas=5']);
    expect(plain.status, plain.output).to.equal(0);
    expect(replicas()).to.equal('5');
  });

  it("leaves the renderer's replicas to the HPA with autoscaling on: an upgrade after it scaled goes through and keeps its count", async () => {
    const namespace = await newNamespace();
    const release = `vf${randomBytes(3).toString('hex')}`;
    releases.push({ release, namespace });
    // The HPA held at 6 (min = max): on the real node its controller runs and would otherwise move the
    // count to its bounds between the scale below and the check (a run saw 2, its minimum).
    const values = ['-f', `${CHART}/ci/self-hosted-values.yaml`, '--set', 'renderer.autoscaling.enabled=true', '--set', 'renderer.autoscaling.minReplicas=6', '--set', 'renderer.autoscaling.maxReplicas=6'];
    const renderer = `deployment/${release}-viewfinder-renderer`;
    expect(helm(['install', release, CHART, '--namespace', namespace, ...values]).status).to.equal(0);
    // What the HPA controller does: it writes the scale subresource.
    expect(kubectl(['scale', renderer, '--namespace', namespace, '--replicas=6']).status).to.equal(0);
    const upgraded = helm(['upgrade', release, CHART, '--namespace', namespace, ...values, '--set', 'logLevel=debug']);
    expect(upgraded.status, upgraded.output).to.equal(0);
    expect(kubectl(['get', renderer, '--namespace', namespace, '-o', 'jsonpath={.spec.replicas}']).stdout).to.equal('6');
    // And the chart never claims the field: Helm's field manager owns no .spec.replicas.
    const managed = JSON.parse(kubectl(['get', renderer, '--namespace', namespace, '--show-managed-fields', '-o', 'json']).stdout) as { metadata: { managedFields: Array<{ manager: string; fieldsV1?: { 'f:spec'?: Record<string, unknown> } }> } };
    const helmFields = managed.metadata.managedFields.filter((entry) => entry.manager === 'helm');
    expect(helmFields, 'Helm applied the Deployment').to.not.deep.equal([]);
    for (const entry of helmFields) expect(entry.fieldsV1?.['f:spec'] ?? {}).to.not.have.property('f:replicas');
  });

  it('applies crds/ with kubectl, and applies it again as an upgrade does', () => {
    for (const round of ['first', 'second']) {
      const { status, output } = kubectl(['apply', '-f', `${REPO}crds/`]);
      expect(status, `${round} apply: ${output}`).to.equal(0);
    }
  });

  it("accepts the embedded store's PersistentVolumeClaim (store=embedded with persistence) in a server-side dry run", async () => {
    const namespace = await newNamespace();
    const rendered = helm(['template', `vf${randomBytes(3).toString('hex')}`, CHART, '--namespace', namespace, '--set', 'store=embedded']);
    expect(rendered.status, rendered.output).to.equal(0);
    const objects = manifestsOf(rendered.stdout);
    expect(objects.filter((object) => object.kind === 'PersistentVolumeClaim')).to.have.length(1);
    const applied = kubectl(['apply', '--dry-run=server', '-f', '-'], asList(objects, namespace));
    expect(applied.status, applied.output).to.equal(0);
    expect(applied.stdout.trim().split('\n'), applied.output).to.have.length(objects.length);
  });

  const valueFiles: (string | undefined)[] = [undefined, ...ciValueFiles()];
  for (const file of valueFiles) {
    const label = file ? `ci/${basename(file)}` : 'values.yaml';

    it(`accepts every object rendered with ${label} in a server-side dry run`, async () => {
      const namespace = await newNamespace();
      const rendered = helm(['template', `vf${randomBytes(3).toString('hex')}`, CHART, '--namespace', namespace, ...(await valuesArgs(file, namespace))]);
      expect(rendered.status, rendered.output).to.equal(0);
      const objects = manifestsOf(rendered.stdout);
      const applied = kubectl(['apply', '--dry-run=server', '-f', '-'], asList(objects, namespace));
      expect(applied.status, applied.output).to.equal(0);
      expect(applied.stdout.trim().split('\n'), applied.output).to.have.length(objects.length);
    });

    it(`installs with ${label} (deployed, every object created), upgrades keeping generated Secrets, and uninstalls (every object gone)`, async () => {
      const namespace = await newNamespace();
      const release = `vf${randomBytes(3).toString('hex')}`;
      const args = await valuesArgs(file, namespace);
      releases.push({ release, namespace });
      const status = () => JSON.parse(helm(['status', release, '--namespace', namespace, '-o', 'json']).stdout).info.status as string;

      const installed = helm(['install', release, CHART, '--namespace', namespace, ...args]);
      expect(installed.status, installed.output).to.equal(0);
      expect(status()).to.equal('deployed');

      const objects = manifestsOf(helm(['get', 'manifest', release, '--namespace', namespace]).stdout);
      const list = asList(objects, namespace);
      const existing = kubectl(['get', '-f', '-', '-o', 'name'], list);
      expect(existing.status, existing.output).to.equal(0);
      expect(existing.stdout.trim().split('\n'), 'every rendered object exists').to.have.length(objects.length);

      const secretNames = objects.filter((object) => object.kind === 'Secret').map((object) => object.metadata.name);
      const secretData = () => secretNames.map((name) => JSON.parse(kubectl(['get', 'secret', name, '--namespace', namespace, '-o', 'json']).stdout).data);
      const before = secretData();
      const upgraded = helm(['upgrade', release, CHART, '--namespace', namespace, ...args]);
      expect(upgraded.status, upgraded.output).to.equal(0);
      expect(status()).to.equal('deployed');
      expect(secretData(), 'generated passwords and tokens survive the upgrade').to.deep.equal(before);

      const uninstalled = helm(['uninstall', release, '--namespace', namespace]);
      expect(uninstalled.status, uninstalled.output).to.equal(0);
      const removed = asList(objects.filter((object) => !keptByHelm(object)), namespace);
      await waitFor('every object of the release to be gone', () => {
        const left = kubectl(['get', '-f', '-', '-o', 'name', '--ignore-not-found'], removed);
        return left.status === 0 && left.stdout.trim() === '';
      }, 300, 200);
      const kept = objects.filter(keptByHelm);
      // Kept on purpose, so that a reinstall finds its data readable: MongoDB's Secret (its password),
      // the key that seals the signing secrets, and the embedded store's claim. Nothing else.
      const keptOnPurpose = [/^Secret\/.*mongodb$/, /^Secret\/.*signing-secrets-key$/, /^PersistentVolumeClaim\/.*-api$/];
      expect(kept.map((object) => `${object.kind}/${object.metadata.name}`), 'only the store\'s data and secrets are kept').to.satisfy((names: string[]) =>
        names.every((name) => keptOnPurpose.some((pattern) => pattern.test(name))),
      );
      if (kept.length > 0) {
        const left = kubectl(['get', '-f', '-', '-o', 'name'], asList(kept, namespace));
        expect(left.stdout.trim().split('\n'), left.output).to.have.length(kept.length);
      }
    });
  }
});

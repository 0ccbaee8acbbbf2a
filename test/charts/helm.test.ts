import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { loadOperatorConfig } from '../../operator/src/config.ts';
import { loadApiConfig } from '../../services/api/src/config.ts';
import { loadRendererServiceConfig } from '../../services/renderer/src/config.ts';
import { checkTracingEnv, tracingConfigured } from '../../lib/tracing.ts';
import { helm } from '../support/k8s-tools.ts';
import { bytesOf, CHART, ciValueFiles, defaultValues, mergeValues, readYaml, type Values } from './chart.ts';
import { exceptProblem, ipBlocks } from './network-policy-cidr.ts';

/**
 * `helm lint` and `helm template` on the chart with values.yaml and each ci/*.yaml, and checks on
 * what it renders, with the Helm v4 that `make k8s-tools` installs (helm is not in Debian).
 */

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }; [key: string]: any };

const NAMESPACE = 'viewfinder';
const RELEASE = 'vf';

function render(valueFile?: string, sets: string[] = []): Manifest[] {
  const args = ['template', RELEASE, CHART, '--namespace', NAMESPACE, ...(valueFile ? ['-f', valueFile] : []), ...sets.flatMap((set) => ['--set', set])];
  const { status, output, stdout } = helm(args);
  expect(status, output).to.equal(0);
  return parseAllDocuments(stdout)
    .map((document) => {
      expect(document.errors, `YAML errors: ${document.errors.join('; ')}`).to.deep.equal([]);
      return document.toJS() as Manifest | null;
    })
    .filter((manifest): manifest is Manifest => manifest !== null);
}

const byKind = (manifests: Manifest[], kind: string) => manifests.filter((manifest) => manifest.kind === kind);

function one(manifests: Manifest[], kind: string, component: string): Manifest {
  const found = manifests.filter((manifest) => manifest.kind === kind && manifest.metadata.labels?.['app.kubernetes.io/component'] === component);
  expect(found, `${kind} of ${component}`).to.have.length(1);
  return found[0] as Manifest;
}

const workloads = (manifests: Manifest[]) => manifests.filter((manifest) => manifest.kind === 'Deployment' || manifest.kind === 'StatefulSet');

/** TRUST_PROXY as the chart decides it: api.trustProxy, where auto means hosted mode behind an Ingress with TLS. */
function trustsProxy(values: any): boolean {
  if (values.api.trustProxy !== 'auto') return values.api.trustProxy;
  return values.api.mode === 'hosted' && values.ingress.enabled && values.ingress.tls.length > 0;
}

const envOf = (container: any, name: string) => (container.env as any[]).find((entry) => entry.name === name);

/** A container's environment as the process would see it; Secret and field references get a stand-in value. */
/** A value of the form a Secret must hold for the variables the API checks the form of. */
const SECRET_FORMS: Record<string, string> = { SIGNING_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'), SIGNING_SECRETS_PREVIOUS_KEYS: Buffer.alloc(32, 8).toString('base64') };

function processEnv(container: any): Record<string, string> {
  return Object.fromEntries(
    (container.env as any[]).map((entry) => [entry.name, entry.valueFrom ? (SECRET_FORMS[entry.name] ?? `from-${Object.keys(entry.valueFrom)[0]}`) : String(entry.value)]),
  );
}

/** What every values file must render, whatever it turns on or off. */
function checkSecureWorkloads(manifests: Manifest[]) {
  expect(workloads(manifests)).to.not.be.empty;
  for (const workload of workloads(manifests)) {
    const pod = workload.spec.template.spec;
    const where = `${workload.kind} ${workload.metadata.name}`;
    expect(pod.securityContext.runAsNonRoot, `${where}: runAsNonRoot`).to.equal(true);
    expect(pod.securityContext.runAsUser, `${where}: runAsUser`).to.be.greaterThan(0);
    expect(pod.securityContext.seccompProfile?.type, `${where}: seccomp`).to.equal('RuntimeDefault');
    expect(pod.serviceAccountName, `${where}: own ServiceAccount`).to.equal(workload.metadata.name);
    const component = workload.metadata.labels?.['app.kubernetes.io/component'];
    // The API's token only watches the renderers' EndpointSlices and reviews the operator's tokens (api-rbac.yaml).
    const apiNeedsToken = envOf(pod.containers[0], 'RENDERER_SERVICE') !== undefined || envOf(pod.containers[0], 'OPERATOR_SERVICE_ACCOUNTS') !== undefined;
    const needsToken = component === 'operator' || (component === 'api' && apiNeedsToken);
    expect(pod.automountServiceAccountToken, `${where}: a token only for the operator, and an API that discovers renderers or reviews tokens`).to.equal(needsToken);
    for (const container of pod.containers) {
      const context = container.securityContext;
      expect(context.allowPrivilegeEscalation, `${where}: allowPrivilegeEscalation`).to.equal(false);
      expect(context.readOnlyRootFilesystem, `${where}: readOnlyRootFilesystem`).to.equal(true);
      expect(context.capabilities?.drop, `${where}: capabilities`).to.deep.equal(['ALL']);
      expect(container.resources?.requests?.memory, `${where}: memory request`).to.be.a('string');
      expect(container.resources?.limits?.memory, `${where}: memory limit`).to.be.a('string');
      expect(container.livenessProbe, `${where}: livenessProbe`).to.be.an('object');
      expect(container.readinessProbe, `${where}: readinessProbe`).to.be.an('object');
      const mounts = (container.volumeMounts ?? []).map((mount: any) => mount.mountPath);
      expect(mounts, `${where}: a writable /tmp`).to.include('/tmp');
    }
  }
}

describe('chart rendered by helm', function () {
  this.timeout(120_000);

  const valueFiles: (string | undefined)[] = [undefined, ...ciValueFiles()];
  for (const file of valueFiles) {
    const label = file ? `ci/${basename(file)}` : 'values.yaml';

    it(`passes helm lint --strict with ${label}`, () => {
      const { status, output } = helm(['lint', '--strict', CHART, ...(file ? ['-f', file] : [])]);
      expect(status, output).to.equal(0);
    });

    it(`renders secure workloads with ${label}: non-root, seccomp, read-only root, no capabilities, probes, resources`, () => {
      checkSecureWorkloads(render(file));
    });

    it(`renders the objects ${label} turns on`, () => {
      const values = file ? mergeValues(defaultValues(), readYaml(file) as Values) : defaultValues();
      const manifests = render(file);
      const v = values as any;
      one(manifests, 'Deployment', 'api');
      one(manifests, 'Deployment', 'renderer');
      one(manifests, 'Service', 'api');
      one(manifests, 'Service', 'renderer');
      expect(byKind(manifests, 'Deployment').some((d) => d.metadata.labels?.['app.kubernetes.io/component'] === 'operator')).to.equal(v.operator.enabled);
      const runsMongodb = v.mongodb.enabled && v.store === 'mongodb';
      expect(byKind(manifests, 'StatefulSet')).to.have.length(runsMongodb ? 1 : 0);
      expect(byKind(manifests, 'PersistentVolumeClaim')).to.have.length(v.api.mode === 'hosted' && v.store === 'embedded' && v.embeddedStore.persistence.enabled ? 1 : 0);
      expect(byKind(manifests, 'HorizontalPodAutoscaler')).to.have.length(v.renderer.autoscaling.enabled && v.renderer.autoscaling.signal === 'cpu' ? 1 : 0);
      expect(byKind(manifests, 'ScaledObject')).to.have.length(v.renderer.autoscaling.enabled && v.renderer.autoscaling.signal === 'busySlots' ? 1 : 0);
      expect(byKind(manifests, 'NetworkPolicy').map((policy) => policy.metadata.labels?.['app.kubernetes.io/component']).sort()).to.deep.equal([
        ...(v.api.networkPolicy.enabled && trustsProxy(v) ? ['api'] : []),
        ...(runsMongodb && v.mongodb.networkPolicy.enabled ? ['mongodb'] : []),
        ...(v.operator.enabled && v.operator.networkPolicy.enabled ? ['operator'] : []),
        ...(v.renderer.networkPolicy.enabled ? ['renderer'] : []),
      ]);
      expect(byKind(manifests, 'Ingress')).to.have.length(v.ingress.enabled ? 1 : 0);
      expect(byKind(manifests, 'ServiceMonitor')).to.have.length(v.metrics.serviceMonitor.enabled ? 1 : 0);
      expect(byKind(manifests, 'PrometheusRule')).to.have.length(v.metrics.prometheusRule.enabled ? 1 : 0);
      expect(byKind(manifests, 'ConfigMap').filter((c) => c.metadata.labels?.grafana_dashboard === '1')).to.have.length(v.metrics.dashboard.enabled ? 1 : 0);
      expect(byKind(manifests, 'PodDisruptionBudget')).to.have.length(v.operator.enabled ? 3 : 2);
    });

    it(`sets environments the API and the renderer accept, matching their ports, with ${label}`, () => {
      const manifests = render(file);
      const apiContainer = one(manifests, 'Deployment', 'api').spec.template.spec.containers[0];
      const rendererContainer = one(manifests, 'Deployment', 'renderer').spec.template.spec.containers[0];
      const api = loadApiConfig(processEnv(apiContainer));
      const renderer = loadRendererServiceConfig(processEnv(rendererContainer));
      expect(api.port).to.equal(apiContainer.ports[0].containerPort);
      expect(renderer.port).to.equal(rendererContainer.ports[0].containerPort);
      const discovering = (file ? mergeValues(defaultValues(), readYaml(file) as Values) : defaultValues()) as any;
      if (discovering.api.rendererDiscovery === 'endpointSlices') expect(api.remoteRenderer?.discovery?.service).to.equal(one(manifests, 'Service', 'renderer').metadata.name);
      else expect(api.remoteRenderer?.urls).to.have.length(1);
      expect(renderer.shutdownTimeoutMs, 'a draining renderer outlasts its longest capture').to.be.at.least(renderer.renderer.captureTimeoutMs);
      expect(renderer.token, 'the renderer demands the token').to.be.a('string');
      expect(renderer.renderer.chromiumSandbox, 'no sandbox under RuntimeDefault seccomp').to.equal(false);
      const values = (file ? mergeValues(defaultValues(), readYaml(file) as Values) : defaultValues()) as any;
      expect(api.mode).to.equal(values.api.mode);
      expect(api.store.backend).to.equal(values.api.mode === 'hosted' && values.store === 'mongodb' ? 'mongo' : 'sqlite');
      if (values.api.mode === 'hosted' && values.operator.enabled) {
        expect(api.operatorAuth.trustedServiceAccounts, 'the API trusts the operator').to.deep.equal([`${NAMESPACE}/${one(manifests, 'Deployment', 'operator').spec.template.spec.serviceAccountName}`]);
      }
      expect(api.dashboard.trustProxy, 'TRUST_PROXY').to.equal(trustsProxy(values));
      expect(api.resultCache.maxBytes).to.equal(values.api.resultCache.maxMb * 1024 * 1024);
      if (api.resultCache.backend === 'disk') {
        const mounts = (apiContainer.volumeMounts as any[]).map((mount) => mount.mountPath as string);
        expect(mounts.some((mount) => api.resultCache.backend === 'disk' && api.resultCache.dir.startsWith(`${mount}/`)), 'the cache dir is on a mounted volume').to.equal(true);
      }
      const grace = one(manifests, 'Deployment', 'renderer').spec.template.spec.terminationGracePeriodSeconds;
      expect(grace * 1000, 'the pod outlives the drain: its grace, then its captures').to.be.greaterThan(renderer.drainGraceMs + renderer.shutdownTimeoutMs);
    });

    it(`renders NetworkPolicy excepts the API server accepts (same family, strict subset of the cidr) with ${label}`, () => {
      const policies = byKind(render(file), 'NetworkPolicy');
      const problems = policies.flatMap((policy) =>
        ipBlocks(policy).flatMap((block) => (block.except ?? []).map((except) => exceptProblem(block.cidr, except)).filter((problem) => problem !== undefined).map((problem) => `${policy.metadata.name}: ${problem}`)),
      );
      expect(problems).to.deep.equal([]);
    });

    it(`points the API at the renderer Service with the renderers' token with ${label}`, () => {
      const manifests = render(file);
      const api = one(manifests, 'Deployment', 'api').spec.template.spec.containers[0];
      const renderer = one(manifests, 'Deployment', 'renderer').spec.template.spec.containers[0];
      const service = one(manifests, 'Service', 'renderer');
      const discovery = envOf(api, 'RENDERER_SERVICE');
      if (discovery) expect(discovery.value).to.equal(service.metadata.name);
      else expect(envOf(api, 'RENDERER_URL').value).to.equal(`http://${service.metadata.name}:${service.spec.ports[0].port}`);
      expect(envOf(api, 'RENDERER_TOKEN').valueFrom.secretKeyRef).to.deep.equal(envOf(renderer, 'RENDERER_TOKEN').valueFrom.secretKeyRef);
      expect(service.metadata.name).to.include('renderer');
    });
  }

  it('ships files/prometheus-rules.yaml as the PrometheusRule spec, unchanged', () => {
    const manifests = render(undefined, ['metrics.prometheusRule.enabled=true']);
    const rule = byKind(manifests, 'PrometheusRule')[0] as Manifest;
    expect(rule.spec).to.deep.equal(parse(readFileSync(`${CHART}files/prometheus-rules.yaml`, 'utf8')));
  });

  it('ships files/grafana-dashboard.json in a ConfigMap labelled grafana_dashboard: "1"', () => {
    const manifests = render(undefined, ['metrics.dashboard.enabled=true']);
    const dashboard = byKind(manifests, 'ConfigMap').find((c) => c.metadata.labels?.grafana_dashboard === '1') as Manifest;
    const [json] = Object.values(dashboard.data as Record<string, string>);
    expect(JSON.parse(json as string)).to.deep.equal(JSON.parse(readFileSync(`${CHART}files/grafana-dashboard.json`, 'utf8')));
  });

  it("sets the dashboard's traces_url variable from metrics.dashboard.tracesUrl, and nothing else of it", () => {
    const url = 'https://jaeger.example.com';
    const manifests = render(undefined, ['metrics.dashboard.enabled=true', `metrics.dashboard.tracesUrl=${url}`]);
    const dashboard = byKind(manifests, 'ConfigMap').find((c) => c.metadata.labels?.grafana_dashboard === '1') as Manifest;
    const [json] = Object.values(dashboard.data as Record<string, string>);
    const expected = JSON.parse(readFileSync(`${CHART}files/grafana-dashboard.json`, 'utf8'));
    const variable = expected.templating.list.find((candidate: { name: string }) => candidate.name === 'traces_url');
    Object.assign(variable, { query: url, current: { text: url, value: url } });
    expect(JSON.parse(json as string)).to.deep.equal(expected);
    const refused = helm(['template', RELEASE, CHART, '--set', 'metrics.dashboard.enabled=true', '--set', 'metrics.dashboard.tracesUrl=javascript:alert(1)']);
    expect(refused.status).to.not.equal(0);
    expect(refused.output).to.include('tracesUrl');
  });

  it('scrapes the renderer under a job whose name contains "renderer" (the RendererDown alert)', () => {
    const manifests = render(undefined, ['metrics.serviceMonitor.enabled=true']);
    const monitor = byKind(manifests, 'ServiceMonitor')[0] as Manifest;
    const renderer = one(manifests, 'Service', 'renderer');
    const selected = Object.entries(monitor.spec.selector.matchLabels).every(([key, value]) => renderer.metadata.labels?.[key] === value);
    expect(selected, 'the ServiceMonitor selects the renderer Service').to.equal(true);
    expect(monitor.spec.jobLabel, 'job named after the Service').to.equal(undefined);
    expect(monitor.spec.endpoints[0].port).to.equal(renderer.spec.ports[0].name);
  });

  it('lets the renderer reach the internet but not private, shared, link-local or loopback ranges; DNS only to kube-dns', () => {
    const policy = one(render(), 'NetworkPolicy', 'renderer');
    expect(policy.spec.policyTypes).to.include('Egress');
    const blocks = policy.spec.egress.flatMap((rule: any) => rule.to ?? []).filter((peer: any) => peer.ipBlock?.cidr === '0.0.0.0/0');
    expect(blocks).to.have.length(1);
    expect(blocks[0].ipBlock.except).to.include.members(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16', '127.0.0.0/8']);
    const dns = policy.spec.egress.find((rule: any) => rule.ports?.some((port: any) => port.port === 53));
    expect(dns.to[0].podSelector.matchLabels).to.deep.equal({ 'k8s-app': 'kube-dns' });
  });

  it('traces nothing by default; with tracing.otlpEndpoint, gives the API and the renderers the endpoint and the sampler, and the renderers a way to the receiver on its port only', () => {
    const tracingEnv = (container: any) => Object.fromEntries(Object.entries(processEnv(container)).filter(([name]) => name.startsWith('OTEL_')));
    const plain = render();
    for (const component of ['api', 'renderer']) expect(tracingEnv(one(plain, 'Deployment', component).spec.template.spec.containers[0]), component).to.deep.equal({});
    const receiver = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'observability' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'opentelemetry-collector' } } };
    const traced = render(undefined, [
      'tracing.otlpEndpoint=http://otel-collector.observability:4318',
      'tracing.receiverTo[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=observability',
      'tracing.receiverTo[0].podSelector.matchLabels.app\\.kubernetes\\.io/name=opentelemetry-collector',
    ]);
    for (const component of ['api', 'renderer']) {
      const env = tracingEnv(one(traced, 'Deployment', component).spec.template.spec.containers[0]);
      expect(env, component).to.deep.equal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability:4318', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' });
      expect(tracingConfigured(env), component).to.equal(true);
      expect(() => checkTracingEnv(env), component).to.not.throw();
    }
    const egress = one(traced, 'NetworkPolicy', 'renderer').spec.egress as any[];
    expect(egress.filter((rule) => rule.ports?.some((port: any) => port.port === 4318))).to.deep.equal([{ to: [receiver], ports: [{ port: 4318, protocol: 'TCP' }] }]);
    expect((one(plain, 'NetworkPolicy', 'renderer').spec.egress as any[]).some((rule) => rule.ports?.some((port: any) => port.port === 4318))).to.equal(false);
  });

  it('gives the operator its CRDs with status and finalizers, Secrets, Events and Leases, and nothing cluster-wide beyond that', () => {
    const manifests = render();
    const clusterRole = one(manifests, 'ClusterRole', 'operator');
    const resources = clusterRole.rules.flatMap((rule: any) => rule.resources);
    expect(resources).to.have.members([
      ...['sites', 'apikeys', 'pagemonitors'].flatMap((plural) => [plural, `${plural}/status`, `${plural}/finalizers`]),
      'secrets',
      'events',
      'events',
    ]);
    const leaseRole = byKind(manifests, 'Role').find((role) => role.rules.some((rule: any) => rule.resources.includes('leases'))) as Manifest;
    expect(leaseRole.metadata.namespace).to.equal(NAMESPACE);
  });

  it("makes the operator's Lease owned by its Deployment (LEASE_OWNER_DEPLOYMENT), which it may only get, so that helm uninstall's garbage collection takes the Lease", () => {
    const manifests = render();
    const deployment = one(manifests, 'Deployment', 'operator');
    const config = loadOperatorConfig({ ...processEnv(deployment.spec.template.spec.containers[0]), POD_NAMESPACE: NAMESPACE });
    expect(config.leaderElection.ownerDeployment).to.equal(deployment.metadata.name);
    expect(config.leaderElection.leaseNamespace).to.equal(NAMESPACE);
    const leaseRole = byKind(manifests, 'Role').find((role) => role.rules.some((rule: any) => rule.resources.includes('leases'))) as Manifest;
    expect(leaseRole.rules.filter((rule: any) => rule.apiGroups.includes('apps'))).to.deep.equal([
      { apiGroups: ['apps'], resources: ['deployments'], resourceNames: [deployment.metadata.name], verbs: ['get'] },
    ]);
  });

  it('binds Roles in the watched namespaces only, when operator.watchNamespaces is set', () => {
    const manifests = render(undefined, ['operator.watchNamespaces={shop,blog}']);
    expect(byKind(manifests, 'ClusterRole').filter((role) => role.metadata.labels?.['app.kubernetes.io/component'] === 'operator')).to.deep.equal([]);
    const namespaces = byKind(manifests, 'RoleBinding')
      .filter((binding) => binding.metadata.labels?.['app.kubernetes.io/component'] === 'operator')
      .map((binding) => binding.metadata.namespace);
    expect(namespaces).to.have.members(['shop', 'blog', NAMESPACE]);
    expect(envOf(one(manifests, 'Deployment', 'operator').spec.template.spec.containers[0], 'WATCH_NAMESPACE').value).to.equal('shop,blog');
  });

  it('lets the API only get, list and watch EndpointSlices in its namespace, and turns that off with rendererDiscovery=service', () => {
    const manifests = render();
    const role = one(manifests, 'Role', 'api');
    expect(role.metadata.namespace).to.equal(NAMESPACE);
    expect(role.rules).to.deep.equal([{ apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] }]);
    expect(one(manifests, 'RoleBinding', 'api').subjects).to.deep.equal([{ kind: 'ServiceAccount', name: one(manifests, 'Deployment', 'api').metadata.name, namespace: NAMESPACE }]);
    const api = one(manifests, 'Deployment', 'api').spec.template.spec.containers[0];
    expect(envOf(api, 'POD_NAMESPACE').valueFrom.fieldRef.fieldPath).to.equal('metadata.namespace');
    const plain = render(undefined, ['api.rendererDiscovery=service']);
    expect(plain.filter((m) => m.kind === 'Role' && m.metadata.labels?.['app.kubernetes.io/component'] === 'api')).to.deep.equal([]);
    // The token stays for the operator's TokenReviews; without the operator there is none.
    expect(one(plain, 'Deployment', 'api').spec.template.spec.automountServiceAccountToken).to.equal(true);
    expect(one(render(undefined, ['api.rendererDiscovery=service', 'operator.enabled=false']), 'Deployment', 'api').spec.template.spec.automountServiceAccountToken).to.equal(false);
  });

  it('scales renderers on busy slots with a KEDA ScaledObject when autoscaling.signal=busySlots', () => {
    const manifests = render(undefined, ['renderer.autoscaling.signal=busySlots', 'renderer.autoscaling.prometheusServerAddress=http://prometheus:9090', 'renderer.concurrency=4']);
    expect(byKind(manifests, 'HorizontalPodAutoscaler')).to.deep.equal([]);
    const scaled = one(manifests, 'ScaledObject', 'renderer');
    expect(scaled.spec.scaleTargetRef.name).to.equal(one(manifests, 'Deployment', 'renderer').metadata.name);
    const [busy, cpu] = scaled.spec.triggers;
    expect(busy.type).to.equal('prometheus');
    expect(busy.metadata.query).to.match(/^sum\(viewfinder_render_in_flight\{namespace="viewfinder",job="[^"]+renderer"\}\) \+ sum\(viewfinder_render_queue_depth\{/);
    expect(busy.metadata.threshold).to.equal('3');
    expect(cpu.type).to.equal('cpu');
    const refused = helm(['template', RELEASE, CHART, '--set', 'renderer.autoscaling.signal=busySlots']);
    expect(refused.status).to.not.equal(0);
    expect(refused.output).to.include('prometheusServerAddress');
  });

  it("gives the CPU HPA and KEDA's HPA the same behaviour, from renderer.autoscaling's scaleUp and scaleDown", () => {
    const windows = ['renderer.autoscaling.scaleUp.stabilizationWindowSeconds=7', 'renderer.autoscaling.scaleDown.stabilizationWindowSeconds=90', 'renderer.autoscaling.scaleDown.pods=2', 'renderer.autoscaling.scaleDown.periodSeconds=30'];
    const expected = { scaleUp: { stabilizationWindowSeconds: 7 }, scaleDown: { stabilizationWindowSeconds: 90, policies: [{ type: 'Pods', value: 2, periodSeconds: 30 }] } };
    expect(one(render(undefined, windows), 'HorizontalPodAutoscaler', 'renderer').spec.behavior).to.deep.equal(expected);
    const scaled = one(render(undefined, [...windows, 'renderer.autoscaling.signal=busySlots', 'renderer.autoscaling.prometheusServerAddress=http://prometheus:9090', 'renderer.autoscaling.pollingIntervalSeconds=5']), 'ScaledObject', 'renderer');
    expect(scaled.spec.advanced.horizontalPodAutoscalerConfig.behavior).to.deep.equal(expected);
    expect(scaled.spec.pollingInterval).to.equal(5);
  });

  it('refuses a shutdown timeout shorter than the capture timeout: a draining renderer must finish its captures', () => {
    const { status, output } = helm(['template', RELEASE, CHART, '--set', 'shutdownTimeoutSeconds=30']);
    expect(status).to.not.equal(0);
    expect(output).to.include('renderer.captureTimeoutSeconds');
  });

  it('admits only the API to MongoDB: the operator goes through the API', () => {
    const manifests = render();
    const policy = one(manifests, 'NetworkPolicy', 'mongodb');
    const admitted = policy.spec.ingress[0].from.map((peer: any) => peer.podSelector.matchLabels['app.kubernetes.io/component']);
    expect(admitted).to.have.members(['api']);
    expect(processEnv(one(manifests, 'Deployment', 'operator').spec.template.spec.containers[0])).not.to.have.any.keys('MONGODB_URI', 'DATA_DIR');
    expect(one(manifests, 'StatefulSet', 'mongodb').spec.template.metadata.labels).to.include(policy.spec.podSelector.matchLabels);
  });

  it('lets the API pods reach a MongoDB outside the chart (mongodb.external): no NetworkPolicy that selects them limits their egress, and no MongoDB policy is rendered', () => {
    const external = `${CHART}ci/external-mongodb-values.yaml`;
    const TLS = ['ingress.enabled=true', 'ingress.tls[0].secretName=vf-tls', 'ingress.tls[0].hosts[0]=shots.example.com', 'ingress.hosts[0]=shots.example.com'];
    for (const sets of [[], TLS, ['api.mode=self-hosted', 'operator.enabled=false', ...TLS]]) {
      const manifests = render(external, sets);
      const apiLabels = one(manifests, 'Deployment', 'api').spec.template.metadata.labels as Record<string, string>;
      const policies = manifests.filter((m) => m.kind === 'NetworkPolicy');
      const selectingApi = policies.filter((policy) => Object.entries(policy.spec.podSelector.matchLabels ?? {}).every(([label, value]) => apiLabels[label] === value));
      for (const policy of selectingApi) expect(policy.spec.policyTypes, `${policy.metadata.name} with ${sets.join(' ')}`).to.not.include('Egress');
      expect(policies.map((policy) => policy.metadata.labels?.['app.kubernetes.io/component']), sets.join(' ')).to.not.include('mongodb');
      // Hosted mode behind TLS has the API's own policy (trustProxy): it exists, and it governs ingress only.
      if (sets === TLS) expect(selectingApi.map((policy) => policy.spec.policyTypes)).to.deep.equal([['Ingress']]);
    }
  });

  describe('the result cache', () => {
    const apiPod = (manifests: Manifest[]) => one(manifests, 'Deployment', 'api').spec.template.spec;
    const selfHosted = `${CHART}ci/self-hosted-values.yaml`;

    it('gives the self-hosted API a writable DATA_DIR for it: an emptyDir sized to RESULT_CACHE_MAX_MB and a margin', () => {
      const pod = apiPod(render(selfHosted, ['api.resultCache.maxMb=1000']));
      const config = loadApiConfig(processEnv(pod.containers[0]));
      expect(config.resultCache).to.deep.include({ backend: 'disk', maxBytes: 1000 * 1024 * 1024 });
      const mount = (pod.containers[0].volumeMounts as any[]).find((m) => config.resultCache.backend === 'disk' && config.resultCache.dir.startsWith(`${m.mountPath}/`));
      expect(mount, 'a volume under the cache dir').to.not.equal(undefined);
      expect(mount.readOnly ?? false).to.equal(false);
      const volume = (pod.volumes as any[]).find((v) => v.name === mount.name);
      // 1000 MiB of entries, a quarter more before eviction catches up, 64 MiB of temporary files.
      expect(volume.emptyDir).to.deep.equal({ sizeLimit: '1314Mi' });
    });

    it('puts the self-hosted DATA_DIR on an existing claim when api.resultCache.existingClaim is set', () => {
      const pod = apiPod(render(selfHosted, ['api.resultCache.existingClaim=vf-cache']));
      const dataDir = envOf(pod.containers[0], 'DATA_DIR').value;
      const mount = (pod.containers[0].volumeMounts as any[]).find((m) => m.mountPath === dataDir);
      const volume = (pod.volumes as any[]).find((v) => v.name === mount.name);
      expect(volume).to.deep.equal({ name: mount.name, persistentVolumeClaim: { claimName: 'vf-cache' } });
    });

    it('keeps hosted mode on GridFS, bounded by RESULT_CACHE_MAX_MB, with no DATA_DIR volume', () => {
      const pod = apiPod(render(undefined, ['api.resultCache.maxMb=2048']));
      const config = loadApiConfig(processEnv(pod.containers[0]));
      expect(config.resultCache).to.deep.include({ backend: 'gridfs', maxBytes: 2048 * 1024 * 1024 });
      expect(envOf(pod.containers[0], 'DATA_DIR')).to.equal(undefined);
      expect((pod.volumes as any[]).map((v) => v.name)).to.not.include('data');
    });
  });

  describe('TRUST_PROXY behind the Ingress', () => {
    const TLS = ['ingress.enabled=true', 'ingress.tls[0].secretName=vf-tls', 'ingress.tls[0].hosts[0]=shots.example.com', 'ingress.hosts[0]=shots.example.com'];
    const apiEnv = (manifests: Manifest[]) => loadApiConfig(processEnv(one(manifests, 'Deployment', 'api').spec.template.spec.containers[0]));
    const paths = (manifests: Manifest[]) => one(manifests, 'Ingress', 'api').spec.rules[0].http.paths.map((p: any) => p.path);
    const apiPolicies = (manifests: Manifest[]) => byKind(manifests, 'NetworkPolicy').filter((p) => p.metadata.labels?.['app.kubernetes.io/component'] === 'api');

    it('sets PUBLIC_BASE_URL from the Ingress host (https with TLS), or from api.publicBaseUrl when given', () => {
      expect(apiEnv(render(undefined, TLS)).captures.publicBaseUrl).to.equal('https://shots.example.com');
      expect(apiEnv(render(undefined, ['ingress.enabled=true', 'ingress.hosts[0]=plain.example.com'])).captures.publicBaseUrl).to.equal('http://plain.example.com');
      const given = apiEnv(render(undefined, [...TLS, 'api.publicBaseUrl=https://cdn.example.com/shots']));
      expect([given.captures.publicBaseUrl, given.dashboard.publicBaseUrl]).to.deep.equal(['https://cdn.example.com/shots', 'https://cdn.example.com/shots']);
    });

    it('hosted mode seals signing secrets with a generated key from a Secret the chart keeps, or the one named in api.signingSecretsKey', () => {
      const manifests = render(undefined, []);
      const container = one(manifests, 'Deployment', 'api').spec.template.spec.containers[0];
      const ref = envOf(container, 'SIGNING_SECRETS_KEY').valueFrom.secretKeyRef;
      const secret = byKind(manifests, 'Secret').find((s) => s.metadata.name === ref.name);
      expect((secret?.metadata as any).annotations).to.deep.equal({ 'helm.sh/resource-policy': 'keep' });
      const key = Buffer.from(secret!.data[ref.key], 'base64').toString();
      expect(Buffer.from(key, 'base64')).to.have.length(32);
      expect(envOf(container, 'SIGNING_SECRETS_PREVIOUS_KEYS').valueFrom.secretKeyRef).to.deep.equal({ name: ref.name, key: 'previousKeys', optional: true });
      const named = render(undefined, ['api.signingSecretsKey.existingSecret=my-seal']);
      expect(envOf(one(named, 'Deployment', 'api').spec.template.spec.containers[0], 'SIGNING_SECRETS_KEY').valueFrom.secretKeyRef).to.deep.equal({ name: 'my-seal', key: 'key' });
      expect(byKind(named, 'Secret').map((s) => s.metadata.name)).to.not.include(ref.name);
    });

    it('trusts nothing forwarded without TLS at the Ingress, and keeps the dashboard off plain HTTP', () => {
      const manifests = render(undefined, ['ingress.enabled=true']);
      expect(apiEnv(manifests).dashboard.trustProxy).to.equal(false);
      expect(apiPolicies(manifests)).to.deep.equal([]);
      expect(paths(manifests)).to.deep.equal(['/api']);
    });

    it('trusts X-Forwarded-* when the Ingress terminates TLS, routes /dashboard, and admits only the ingress controller and the scrapers to the API', () => {
      const manifests = render(undefined, TLS);
      expect(apiEnv(manifests).dashboard.trustProxy).to.equal(true);
      expect(paths(manifests)).to.deep.equal(['/api', '/dashboard']);
      const [policy] = apiPolicies(manifests);
      const values = defaultValues() as any;
      expect(policy?.spec.policyTypes).to.deep.equal(['Ingress']);
      const operator = { podSelector: { matchLabels: one(manifests, 'NetworkPolicy', 'operator').spec.podSelector.matchLabels } };
      expect(policy?.spec.ingress).to.deep.equal([
        { from: [...values.api.networkPolicy.ingressControllerFrom, ...values.api.networkPolicy.metricsFrom, operator], ports: [{ port: 'http', protocol: 'TCP' }] },
      ]);
      expect(one(manifests, 'Deployment', 'api').spec.template.metadata.labels).to.include(policy?.spec.podSelector.matchLabels);
      expect(one(manifests, 'Service', 'api').spec.ports.map((port: any) => port.targetPort)).to.deep.equal(['http']);
    });

    it('admits the in-cluster clients of api.networkPolicy.clientsFrom too', () => {
      const [policy] = apiPolicies(render(undefined, [...TLS, 'api.networkPolicy.clientsFrom[0].podSelector.matchLabels.app=shop']));
      expect(policy?.spec.ingress[0].from).to.deep.include({ podSelector: { matchLabels: { app: 'shop' } } });
    });

    it('follows api.trustProxy when it is set, and ignores TLS in self-hosted mode, which has no dashboard', () => {
      expect(apiEnv(render(undefined, [...TLS, 'api.trustProxy=false'])).dashboard.trustProxy).to.equal(false);
      expect(apiPolicies(render(undefined, [...TLS, 'api.trustProxy=false']))).to.deep.equal([]);
      expect(apiEnv(render(undefined, ['api.trustProxy=true'])).dashboard.trustProxy).to.equal(true);
      const selfHosted = render(`${CHART}ci/self-hosted-values.yaml`, TLS);
      expect(apiEnv(selfHosted).dashboard.trustProxy).to.equal(false);
      expect(paths(selfHosted)).to.deep.equal(['/screenshot']);
    });

    it('refuses to trust the proxy with a policy that names no ingress controller, which would admit everyone', () => {
      const { status, output } = helm(['template', RELEASE, CHART, ...TLS.flatMap((set) => ['--set', set]), '--set', 'api.networkPolicy.ingressControllerFrom=null']);
      expect(status).to.not.equal(0);
      expect(output).to.include('api.networkPolicy.ingressControllerFrom');
    });
  });

  describe('store: embedded, and the operator through the API (issue 20)', () => {
    const embedded = `${CHART}ci/embedded-values.yaml`;
    const apiDeployment = (manifests: Manifest[]) => one(manifests, 'Deployment', 'api');
    const dataVolume = (manifests: Manifest[]) => {
      const pod = apiDeployment(manifests).spec.template.spec;
      const config = loadApiConfig(processEnv(pod.containers[0]));
      expect(config.store.backend).to.equal('sqlite');
      const dataDir = config.store.backend === 'sqlite' ? config.store.dataDir : '';
      const mount = (pod.containers[0].volumeMounts as any[]).find((m) => m.mountPath === dataDir);
      expect(mount, 'DATA_DIR is a mounted volume').to.not.equal(undefined);
      return (pod.volumes as any[]).find((v) => v.name === mount.name);
    };

    it('renders one API replica with the Recreate strategy, SQLite on a claim the chart creates, and no MongoDB', () => {
      const manifests = render(undefined, ['store=embedded']);
      const api = apiDeployment(manifests);
      expect(api.spec.replicas).to.equal(1);
      expect(api.spec.strategy).to.deep.equal({ type: 'Recreate' });
      const claim = one(manifests, 'PersistentVolumeClaim', 'api');
      expect(claim.spec).to.deep.equal({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } });
      expect(dataVolume(manifests)).to.deep.equal({ name: 'data', persistentVolumeClaim: { claimName: claim.metadata.name } });
      expect(byKind(manifests, 'StatefulSet')).to.deep.equal([]);
      expect(manifests.filter((m) => m.metadata.labels?.['app.kubernetes.io/component'] === 'mongodb')).to.deep.equal([]);
      expect(envOf(api.spec.template.spec.containers[0], 'MONGODB_URI')).to.equal(undefined);
      expect(apiDeployment(render(embedded)).spec.replicas).to.equal(1);
    });

    it('keeps the embedded store\'s claim on helm uninstall (helm.sh/resource-policy: keep), as the MongoDB Secret is kept, unless told not to', () => {
      const kept = one(render(undefined, ['store=embedded']), 'PersistentVolumeClaim', 'api');
      expect(kept.metadata.annotations).to.deep.equal({ 'helm.sh/resource-policy': 'keep' });
      const dropped = one(render(undefined, ['store=embedded', 'embeddedStore.persistence.keepOnUninstall=false']), 'PersistentVolumeClaim', 'api');
      expect(dropped.metadata.annotations).to.equal(undefined);
    });

    it('puts the embedded store on an emptyDir without persistence, or on an existing claim', () => {
      const ephemeral = render(undefined, ['store=embedded', 'embeddedStore.persistence.enabled=false']);
      expect(dataVolume(ephemeral)).to.deep.equal({ name: 'data', emptyDir: { sizeLimit: '1Gi' } });
      expect(byKind(ephemeral, 'PersistentVolumeClaim')).to.deep.equal([]);
      const existing = render(undefined, ['store=embedded', 'embeddedStore.persistence.existingClaim=vf-data']);
      expect(dataVolume(existing)).to.deep.equal({ name: 'data', persistentVolumeClaim: { claimName: 'vf-data' } });
      expect(byKind(existing, 'PersistentVolumeClaim')).to.deep.equal([]);
    });

    it('refuses store=embedded with more than one API replica (values.schema.json), and keeps 2 replicas and a rolling update on MongoDB', () => {
      const refused = helm(['template', RELEASE, CHART, '--set', 'store=embedded', '--set', 'api.replicas=2']);
      expect(refused.status).to.not.equal(0);
      expect(refused.output).to.include('/api/replicas');
      expect(apiDeployment(render(undefined, ['store=embedded', 'api.replicas=1'])).spec.replicas).to.equal(1);
      const mongo = apiDeployment(render());
      expect(mongo.spec.replicas).to.equal(2);
      expect(mongo.spec.strategy).to.equal(undefined);
      expect(apiDeployment(render(undefined, ['api.replicas=3'])).spec.replicas).to.equal(3);
    });

    it('gives the operator no store setting, the API Service as API_URL, and a projected token for the API\'s audience', () => {
      const manifests = render(embedded);
      const pod = one(manifests, 'Deployment', 'operator').spec.template.spec;
      const env = processEnv(pod.containers[0]);
      expect(env).not.to.have.any.keys('MONGODB_URI', 'DATA_DIR');
      const config = loadOperatorConfig({ ...env, POD_NAMESPACE: NAMESPACE });
      const service = one(manifests, 'Service', 'api');
      expect(config.api.url.href).to.equal(new URL(`http://${service.metadata.name}:${service.spec.ports[0].port}/`).href);
      const mount = (pod.containers[0].volumeMounts as any[]).find((m) => config.api.tokenFile?.startsWith(`${m.mountPath}/`));
      const volume = (pod.volumes as any[]).find((v) => v.name === mount.name);
      const apiConfig = loadApiConfig(processEnv(apiDeployment(manifests).spec.template.spec.containers[0]));
      expect(volume.projected.sources).to.deep.equal([{ serviceAccountToken: { path: 'token', audience: apiConfig.operatorAuth.audience, expirationSeconds: 3600 } }]);
      expect(config.api.audience).to.equal(apiConfig.operatorAuth.audience);
      expect(apiConfig.operatorAuth.trustedServiceAccounts).to.deep.equal([`${NAMESPACE}/${pod.serviceAccountName}`]);
    });

    it('lets the API create TokenReviews (a ClusterRole, nothing else), and the operator create no tokens', () => {
      const manifests = render(embedded);
      const role = one(manifests, 'ClusterRole', 'api');
      expect(role.rules).to.deep.equal([{ apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] }]);
      expect(one(manifests, 'ClusterRoleBinding', 'api').subjects).to.deep.equal([{ kind: 'ServiceAccount', name: apiDeployment(manifests).metadata.name, namespace: NAMESPACE }]);
      expect(apiDeployment(manifests).spec.template.spec.automountServiceAccountToken).to.equal(true);
      const operatorRules = manifests
        .filter((m) => (m.kind === 'ClusterRole' || m.kind === 'Role') && m.metadata.labels?.['app.kubernetes.io/component'] === 'operator')
        .flatMap((m) => m.rules.flatMap((rule: any) => rule.resources));
      expect(operatorRules).not.to.include('serviceaccounts/token');
      expect(operatorRules).not.to.include('tokenreviews');
      const withoutOperator = render(undefined, ['operator.enabled=false', 'api.rendererDiscovery=service']);
      expect(byKind(withoutOperator, 'ClusterRole')).to.deep.equal([]);
      expect(envOf(apiDeployment(withoutOperator).spec.template.spec.containers[0], 'OPERATOR_SERVICE_ACCOUNTS')).to.equal(undefined);
      expect(apiDeployment(withoutOperator).spec.template.spec.automountServiceAccountToken).to.equal(false);
    });

    it("lets the operator reach the API's pods on their port, DNS and the Kubernetes API, and only the scrapers reach it", () => {
      const manifests = render(embedded);
      const policy = one(manifests, 'NetworkPolicy', 'operator');
      expect(policy.spec.policyTypes).to.deep.equal(['Ingress', 'Egress']);
      const [toApi, dns, kubernetes] = policy.spec.egress;
      expect(apiDeployment(manifests).spec.template.metadata.labels).to.include(toApi.to[0].podSelector.matchLabels);
      expect(toApi.ports).to.deep.equal([{ port: apiDeployment(manifests).spec.template.spec.containers[0].ports[0].containerPort, protocol: 'TCP' }]);
      expect(dns.ports.map((port: any) => port.port)).to.deep.equal([53, 53]);
      expect(kubernetes).to.deep.equal({ ports: [{ port: 443, protocol: 'TCP' }, { port: 6443, protocol: 'TCP' }] });
      expect(policy.spec.ingress).to.deep.equal([{ from: (defaultValues() as any).operator.networkPolicy.metricsFrom, ports: [{ port: 'http', protocol: 'TCP' }] }]);
      expect(one(manifests, 'Deployment', 'operator').spec.template.metadata.labels).to.include(policy.spec.podSelector.matchLabels);
    });

    it('says in NOTES.txt how to create the first account with kubectl exec', () => {
      const { status, output, stdout } = helm(['install', RELEASE, CHART, '--namespace', NAMESPACE, '--dry-run=client', '-f', embedded]);
      expect(status, output).to.equal(0);
      const notes = stdout.slice(stdout.indexOf('NOTES:'));
      expect(notes).to.include(`kubectl -n ${NAMESPACE} exec deploy/${RELEASE}-viewfinder-api -- node bin/viewfinder.ts accounts create "Acme"`);
      expect(notes).to.include('The store is embedded');
    });
  });

  it("requests for the operator at least the 120 MiB working set measured on the real node (104 to 120 MiB)", () => {
    const operator = one(render(`${CHART}ci/embedded-values.yaml`), 'Deployment', 'operator').spec.template.spec.containers[0];
    expect(bytesOf(operator.resources.requests.memory)).to.be.at.least(120 * 2 ** 20);
    expect(bytesOf(operator.resources.limits.memory)).to.be.greaterThan(bytesOf(operator.resources.requests.memory));
  });

  describe('Kubernetes 1.33 to 1.37 (Chart.yaml kubeVersion)', () => {
    // Served and not deprecated in 1.33 to 1.37; the other groups are the CRDs of KEDA and the Prometheus Operator.
    const STABLE = ['v1', 'apps/v1', 'rbac.authorization.k8s.io/v1', 'networking.k8s.io/v1', 'policy/v1', 'autoscaling/v2', 'monitoring.coreos.com/v1', 'keda.sh/v1alpha1'];
    const everything = ['metrics.serviceMonitor.enabled=true', 'metrics.prometheusRule.enabled=true', 'metrics.dashboard.enabled=true', 'ingress.enabled=true'];

    for (const version of ['1.33.0', '1.37.2']) {
      it(`installs on ${version} and renders only stable APIs there, with every optional object on (and no v1 Endpoints)`, () => {
        for (const sets of [everything, ['store=embedded', 'renderer.autoscaling.signal=busySlots', 'renderer.autoscaling.prometheusServerAddress=http://prometheus:9090']]) {
          const args = ['template', RELEASE, CHART, '--namespace', NAMESPACE, '--kube-version', version, ...sets.flatMap((set) => ['--set', set])];
          const { status, output, stdout } = helm(args);
          expect(status, output).to.equal(0);
          const manifests = parseAllDocuments(stdout).map((document) => document.toJS() as Manifest | null).filter((m): m is Manifest => m !== null);
          expect(manifests.filter((m) => !STABLE.includes(m.apiVersion)).map((m) => `${m.apiVersion} ${m.kind}`)).to.deep.equal([]);
          expect(manifests.filter((m) => m.kind === 'Endpoints')).to.deep.equal([]);
        }
      });
    }

    it('refuses Kubernetes older than 1.33 and newer than 1.37, naming the range', () => {
      for (const version of ['1.32.9', '1.38.0']) {
        const { status, output } = helm(['template', RELEASE, CHART, '--kube-version', version]);
        expect(status, `${version}: ${output}`).to.not.equal(0);
        expect(output).to.include('>=1.33.0-0 <1.38.0-0');
      }
    });
  });

  it('refuses a misspelt value through values.schema.json', () => {
    const { status, output } = helm(['template', RELEASE, CHART, '--set', 'renderer.replicaCount=3']);
    expect(status).to.not.equal(0);
    expect(output).to.include('replicaCount');
  });

  it('refuses hosted mode without a store, saying what to set', () => {
    const { status, output } = helm(['template', RELEASE, CHART, '--set', 'mongodb.enabled=false']);
    expect(status).to.not.equal(0);
    expect(output).to.include('mongodb.external.existingSecret');
  });

  it('truncates every object name to 63 characters with a long release name', () => {
    const { status, output, stdout } = helm(['template', 'a'.repeat(53), CHART, '--namespace', NAMESPACE]);
    expect(status, output).to.equal(0);
    const names = parseAllDocuments(stdout).map((document) => (document.toJS() as Manifest | null)?.metadata.name ?? '');
    expect(names.filter((name) => name.length > 63)).to.deep.equal([]);
  });
});

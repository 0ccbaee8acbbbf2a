import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import type { V1Secret } from '@kubernetes/client-node';
import { pageSchema } from '../../services/api/src/monitors/api-schema.ts';
import { stepsProblems, type JourneyStep } from '../../services/renderer/src/capture/journey-steps.ts';
import { withPageCredentials } from '../../operator/src/controllers/page-credentials.ts';
import type { KubeClient } from '../../operator/src/k8s/client.ts';
import { ajv } from '../../services/api/src/validation.ts';
import { crdAjv } from '../support/crd-ajv.ts';
import { startLoginSite, type LoginSite } from '../support/login-site.ts';
import { startHosted, type HostedHarness } from '../services/api/hosted/support.ts';
import { docSection, runBash } from './doc-sections.ts';

/**
 * docs/monitors.md's "Journeys" section, as written: its sh block run with bash, curl and jq against
 * a hosted API on loopback (real Chromium), the login URL swapped for a sign-in form served here that
 * takes the doc's password, printing exactly the output the doc shows, then again with a password
 * that no longer signs in, printing the failure the doc shows; and its Secret and PageMonitor valid
 * against the CRD, read by the operator's own Secret reader into what the API takes.
 */
const root = path.join(import.meta.dirname, '..', '..');
const { blocks } = docSection('monitors.md', '## Journeys: sign in, then watch the page behind the login', '## Metrics and alerts');
const LOGIN_URL = 'https://shop.example.com/login';

describe('docs/monitors.md: Journeys, as written (bash, curl, jq, real Chromium)', function () {
  this.timeout(180_000);
  const script = blocks.find((block) => block.lang === 'sh' && block.code.includes('valueFrom'))?.code ?? '';
  const password = /export SHOP_PASSWORD='([^']+)'/.exec(script)?.[1] ?? '';
  let site: LoginSite;
  let hosted: HostedHarness;
  let server: http.Server;
  let origin: string;

  before(async () => {
    expect(password, 'the sh block exports SHOP_PASSWORD').to.not.equal('');
    site = await startLoginSite(password);
    hosted = await startHosted({ monitors: true });
    server = http.createServer(hosted.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await hosted?.close();
    await site?.close();
  });

  const texts = blocks.filter((block) => block.lang === 'text').map((block) => block.code);

  it('creates the monitor, signs in on its run and prints the steps the doc shows; with a password that no longer works, the failure it shows', async () => {
    const local = script.replaceAll('localhost:3000', origin).replaceAll(LOGIN_URL, `${site.origin}/login`);
    expect(local, 'the login URL was swapped').to.include(`${site.origin}/login`);
    const signedIn = await runBash(local, { KEY: hosted.fullKey });
    expect(signedIn.stderr).to.equal('');
    expect(signedIn.code).to.equal(0);
    expect(signedIn.stdout).to.equal(texts[0]);
    expect(site.logins).to.deep.equal([{ user: 'ada', ok: true }]);

    // The password changes: the same commands, on a fresh monitor of that name.
    const [monitor] = (await hosted.api(hosted.fullKey).get('/api/monitors')).body as Array<{ id: string }>;
    expect((await hosted.api(hosted.fullKey).delete(`/api/monitors/${monitor!.id}`)).status).to.equal(200);
    const stale = local.replace(/export SHOP_PASSWORD='[^']+'/, "export SHOP_PASSWORD='not the password any more'");
    const refused = await runBash(stale, { KEY: hosted.fullKey });
    expect(refused.stderr).to.equal('');
    expect(refused.code).to.equal(0);
    expect(refused.stdout).to.equal(texts[1]);
    expect(site.logins.at(-1)).to.deep.equal({ user: 'ada', ok: false });
  });

  it("shows a Secret and a PageMonitor the CRD takes, whose values the operator reads into credentials the API's page schema takes, every valueFrom among them", async () => {
    const yaml = blocks.find((block) => block.lang === 'yaml' && block.code.includes('kind: PageMonitor') && block.code.includes('kind: Secret'));
    expect(yaml, 'a Secret and a PageMonitor with steps').to.not.equal(undefined);
    const [secret, resource] = parseAllDocuments(yaml!.code).map((document) => document.toJS()) as [V1Secret, { metadata: { namespace: string }; spec: { pages: Array<Record<string, unknown>> } }];
    expect(secret.kind).to.equal('Secret');
    const crd = parseAllDocuments(readFileSync(path.join(root, 'crds', 'pagemonitor.yaml'), 'utf8'))[0]!.toJS();
    const validateResource = crdAjv().compile(crd.spec.versions[0].schema.openAPIV3Schema);
    expect(validateResource(resource), JSON.stringify(validateResource.errors)).to.equal(true);

    // The operator's own reader of the Secret, on the Secret as written.
    const kube = { getSecret: async (namespace: string, name: string) => (namespace === secret.metadata?.namespace && name === secret.metadata?.name ? secret : null) } as unknown as KubeClient;
    const [page] = await withPageCredentials(kube, resource.metadata.namespace, resource.spec.pages);
    expect(page!.credentials).to.deep.equal({ values: { password } });
    const validatePage = ajv.compile(pageSchema);
    expect(validatePage(page), JSON.stringify(validatePage.errors)).to.equal(true);
    const { values } = page!.credentials as { values: Record<string, string> };
    expect(stepsProblems(page!.steps as JourneyStep[], values, 'credentials.values')).to.deep.equal([]);
    expect(yaml!.code.match(/valueFrom/g)).to.have.length(1);
  });
});

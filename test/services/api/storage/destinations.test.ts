import { expect } from 'chai';
import { apiRegistry } from '../../../../services/api/src/metrics.ts';
import type { Lookup } from '../../../../services/renderer/src/guard/network-guard.ts';
import { capturedLogger } from '../../../support/captured-logger.ts';
import { startSecretServer, type SecretServer } from '../../../support/secret-server.ts';
import { startHosted, type HostedHarness } from '../hosted/support.ts';

/**
 * Storage destinations through the management API (registered once, credentials write-only), and
 * their endpoints through the network guard: at registration, and again when a capture asks for
 * one (whose endpoint may resolve elsewhere by then). A "secret" service on 127.0.0.1 counts every
 * connection: no refused spelling may reach it.
 */
describe('storage destinations: management API and the endpoint guard (hosted)', function () {
  this.timeout(60_000);
  const CREDENTIALS = { accessKeyId: 'AKIADESTINATIONKEY01', secretAccessKey: 'dest-secret/+=0123456789abcdefghijklmno' };
  let hosted: HostedHarness;
  let secret: SecretServer;
  let lines: string[];
  // A name only this resolver knows, answering the cloud metadata address; every other name is loopback.
  const lookup: Lookup = async (hostname) => (hostname === 'metadata.internal.test' ? [{ address: '169.254.169.254', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);

  before(async () => {
    secret = await startSecretServer();
  });
  after(() => secret.close());
  beforeEach(() => secret.reset());
  afterEach(() => hosted?.close());

  const start = async (env: Record<string, string> = {}) => {
    const captured = capturedLogger();
    lines = captured.lines;
    hosted = await startHosted({ env, lookup, logger: captured.logger });
    return hosted.api(hosted.fullKey);
  };
  const destination = (overrides: Record<string, unknown> = {}) => ({ name: 'archive', endpoint: 'http://8.8.8.8:9000', bucket: 'acme-shots', pathStyle: true, credentials: CREDENTIALS, ...overrides });

  describe('management', () => {
    it('registers a destination with defaults, answers it without the credentials, lists, gets, changes and deletes it', async () => {
      const admin = await start();
      const created = await admin.post('/api/destinations', { name: 'archive', endpoint: 'http://8.8.8.8:9000/', bucket: 'acme-shots', credentials: CREDENTIALS });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.body).to.deep.include({ name: 'archive', endpoint: 'http://8.8.8.8:9000', bucket: 'acme-shots', region: 'us-east-1', pathStyle: false, keyTemplate: '{id}.{format}', hasCredentials: true });
      expect(created.body).to.not.have.property('credentials');

      expect((await admin.get('/api/destinations').expect(200)).body.destinations.map((d: { name: string }) => d.name)).to.deep.equal(['archive']);
      expect((await admin.get('/api/destinations/archive').expect(200)).body).to.deep.equal(created.body);

      const changed = await admin.patch('/api/destinations/archive', { keyTemplate: 'shots/{date}/{id}.{format}', region: 'eu-west-1', credentials: { accessKeyId: 'AKIAROTATED', secretAccessKey: 'rotated-secret-value' } });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      expect(changed.body).to.deep.include({ keyTemplate: 'shots/{date}/{id}.{format}', region: 'eu-west-1', hasCredentials: true });
      expect(await hosted.store.getDestinationCredentials(hosted.account.id, 'archive')).to.deep.equal({ accessKeyId: 'AKIAROTATED', secretAccessKey: 'rotated-secret-value' });

      expect((await admin.delete('/api/destinations/archive').expect(200)).body).to.deep.equal({ deleted: 'archive' });
      expect((await admin.get('/api/destinations/archive').expect(404)).body.error).to.equal('Storage destination archive not found');
      await admin.delete('/api/destinations/archive').expect(404);
      await admin.patch('/api/destinations/archive', { bucket: 'other' }).expect(404);

      // Nothing answered or logged ever held the secret.
      expect(lines.join('\n')).to.not.include(CREDENTIALS.secretAccessKey).and.not.include('rotated-secret-value');
    });

    it("refuses with 409 to change or delete a destination a Kubernetes Site owns (spec.storage), naming the Site; lists it with managedBy", async () => {
      const admin = await start();
      const managedBy = { kind: 'Site' as const, namespace: 'shop', name: 'storefront', uid: 'uid-1' };
      await hosted.store.upsertManagedDestination({ accountId: hosted.account.id, name: 'archive', endpoint: 'http://8.8.8.8:9000', bucket: 'acme-shots', region: 'us-east-1', pathStyle: true, keyTemplate: '{id}.{format}', credentials: CREDENTIALS, managedBy });
      const refusal = 'Storage destination archive is managed by Kubernetes: edit the Site "storefront" in namespace "shop" instead (kubectl -n shop edit sites.viewfinder.dev storefront)';
      expect((await admin.patch('/api/destinations/archive', { bucket: 'other' }).expect(409)).body).to.deep.equal({ success: false, error: refusal });
      expect((await admin.patch('/api/destinations/archive', { credentials: { accessKeyId: 'AKIAOTHER', secretAccessKey: 'other-secret' } }).expect(409)).body.error).to.equal(refusal);
      expect((await admin.delete('/api/destinations/archive').expect(409)).body.error).to.equal(refusal);
      expect(await hosted.store.getDestinationCredentials(hosted.account.id, 'archive')).to.deep.equal(CREDENTIALS);
      expect((await admin.get('/api/destinations/archive').expect(200)).body).to.deep.include({ bucket: 'acme-shots', managedBy });
      expect((await admin.get('/api/destinations').expect(200)).body.destinations[0].managedBy).to.deep.equal(managedBy);
      // The ones the API registered are its own: managedBy null, changed and deleted as before.
      await admin.post('/api/destinations', destination({ name: 'plain' })).expect(201);
      expect((await admin.get('/api/destinations/plain').expect(200)).body.managedBy).to.equal(null);
      await admin.delete('/api/destinations/plain').expect(200);
    });

    it('refuses a second destination of the same name with 409', async () => {
      const admin = await start();
      await admin.post('/api/destinations', destination()).expect(201);
      const again = await admin.post('/api/destinations', destination({ bucket: 'other-bucket' })).expect(409);
      expect(again.body).to.deep.equal({ success: false, error: 'A storage destination named archive already exists in this account' });
    });

    it('is for full-access keys: a site key gets 403', async () => {
      const admin = await start();
      const site = await admin.post('/api/sites', { allowedDomains: ['example.com'] }).expect(201);
      const siteKey = (await admin.post('/api/keys', { name: 'site', siteId: site.body.id }).expect(201)).body.key as string;
      await hosted.api(siteKey).post('/api/destinations', destination()).expect(403);
      await hosted.api(siteKey).get('/api/destinations').expect(403);
    });

    const invalid: [string, Record<string, unknown>, RegExp][] = [
      ['a name with capitals', destination({ name: 'Archive' }), /^name must be lower-case letters, digits and hyphens/],
      ['an endpoint that is not http(s)', destination({ endpoint: 'ftp://8.8.8.8' }), /^endpoint must be an http or https URL/],
      ['an endpoint with credentials in it', destination({ endpoint: 'http://user:pass@8.8.8.8' }), /^endpoint must not carry credentials: give them in credentials$/],
      ['an endpoint with a query', destination({ endpoint: 'http://8.8.8.8/?x=1' }), /^endpoint must have no query or fragment$/],
      ['a bad bucket name', destination({ bucket: 'Bad_Bucket' }), /^bucket must be an S3 bucket name/],
      ['an unknown placeholder', destination({ keyTemplate: 'shots/{user}.png' }), /^keyTemplate may use only the placeholders \{id\}, \{date\}, \{format\}; not \{user\}$/],
      ['a template that climbs out', destination({ keyTemplate: '../{id}.{format}' }), /^keyTemplate must make a key of path segments/],
      ['no credentials', destination({ credentials: undefined }), /^credentials must be \{"accessKeyId": \.\.\., "secretAccessKey": \.\.\.\}/],
      ['an extra credential field', destination({ credentials: { ...CREDENTIALS, sessionToken: 'x' } }), /^credentials must be/],
    ];
    for (const [what, body, message] of invalid) {
      it(`answers 400 to ${what}, naming the field and never a value`, async () => {
        const admin = await start();
        const answer = await admin.post('/api/destinations', JSON.parse(JSON.stringify(body)) as object).expect(400);
        expect(answer.body.success).to.equal(false);
        expect(answer.body.error).to.match(message);
        expect(answer.body.error).to.not.include(CREDENTIALS.secretAccessKey);
      });
    }
  });

  describe('the endpoint passes the network guard at registration', () => {
    const LOOPBACK = ['127.0.0.1', 'localhost', 'app.localhost', '2130706433', '0x7f.1', '0177.0.0.1', '127.1', '[::ffff:127.0.0.1]', '[::1]'];
    const OTHER = ['169.254.169.254', 'metadata.internal.test', '10.0.0.1', '172.16.0.1', '192.168.1.1', '100.64.0.1', '0.0.0.0', '[fd00::1]', '[fe80::1]'];
    for (const host of [...LOOPBACK, ...OTHER]) {
      it(`refuses ${host} with 403 and connects to nothing`, async () => {
        const admin = await start();
        const answer = await admin.post('/api/destinations', destination({ endpoint: `http://${host}:${secret.port}` })).expect(403);
        expect(answer.body.error).to.match(/^storage endpoint refused: .* (is|resolves to) a [a-z0-9-]+ address; only public addresses may receive uploads \(see STORAGE_ENDPOINT_ALLOWLIST\)$/);
        expect(secret.hits()).to.equal(0);
        expect(await hosted.store.listDestinations(hosted.account.id)).to.deep.equal([]);
      });
    }

    it("checks the bucket's own host in virtual-hosted style (bucket.endpoint), which PRIVATE_NETWORK_ALLOWLIST does not open", async () => {
      // TEST_ENV allows 127.0.0.0/8 to pages; that opens nothing to uploads.
      const admin = await start();
      await admin.post('/api/destinations', destination({ endpoint: `http://localhost:${secret.port}`, pathStyle: false })).expect(403);
      expect(secret.hits()).to.equal(0);
    });

    it('admits an in-cluster store that STORAGE_ENDPOINT_ALLOWLIST names (the positive control), and only that one', async () => {
      const admin = await start({ STORAGE_ENDPOINT_ALLOWLIST: '127.0.0.2' });
      await admin.post('/api/destinations', destination({ endpoint: 'http://127.0.0.2:9000' })).expect(201);
      await admin.post('/api/destinations', destination({ name: 'other', endpoint: `http://127.0.0.1:${secret.port}` })).expect(403);
      expect(secret.hits()).to.equal(0);
    });

    it('refuses a change that moves the endpoint somewhere refused, keeping the destination as it was', async () => {
      const admin = await start();
      await admin.post('/api/destinations', destination()).expect(201);
      await admin.patch('/api/destinations/archive', { endpoint: 'http://169.254.169.254' }).expect(403);
      expect((await admin.get('/api/destinations/archive').expect(200)).body.endpoint).to.equal('http://8.8.8.8:9000');
    });
  });

  describe('and again when a capture asks for it, before anything renders', () => {
    it('answers 403 to a synchronous capture whose destination now resolves to a refused address, sending no byte and counting a refused upload', async () => {
      await start();
      // Registered when its name answered a public address; the resolver now answers the metadata address.
      await hosted.store.createDestination({ accountId: hosted.account.id, name: 'moved', endpoint: `http://metadata.internal.test:${secret.port}`, bucket: 'acme-shots', region: 'us-east-1', pathStyle: true, keyTemplate: '{id}.{format}', credentials: CREDENTIALS });
      const site = await hosted.store.createSite({ accountId: hosted.account.id, name: 'shop', allowedDomains: ['127.0.0.1'] });
      const before = await uploads('refused');
      const answer = await hosted.api(hosted.fullKey).post('/api/screenshot', { url: 'http://127.0.0.1:9/', site_id: site.id, storage: { destination: 'moved' } });
      expect(answer.status, JSON.stringify(answer.body)).to.equal(403);
      expect(answer.body.error).to.match(/^storage endpoint refused: metadata\.internal\.test resolves to a link-local address/);
      expect(secret.hits()).to.equal(0);
      expect(await uploads('refused')).to.equal(before + 1);
    });

    it('answers 400 to a destination the account does not have, naming how to register one', async () => {
      await start();
      const site = await hosted.store.createSite({ accountId: hosted.account.id, name: 'shop', allowedDomains: ['127.0.0.1'] });
      const answer = await hosted.api(hosted.fullKey).post('/api/screenshot', { url: 'http://127.0.0.1:9/', site_id: site.id, storage: { destination: 'nowhere' } }).expect(400);
      expect(answer.body.error).to.equal('storage.destination: this account has no storage destination named nowhere (POST /api/destinations registers one)');
    });
  });

  describe('the storage option itself', () => {
    const bad: [string, unknown, RegExp][] = [
      ['credentials in it', { destination: 'archive', accessKeyId: 'AKIA', secretAccessKey: 'x' }, /^Unknown field: "storage\.(accessKeyId|secretAccessKey)" \(credentials are never given with a capture/],
      ['no destination', { presign: 60 }, /^storage\.destination is required/],
      ['a presign past 7 days', { destination: 'archive', presign: 604_801 }, /^storage\.presign must be an integer number of seconds from 1 to 604800 \(7 days\)$/],
      ['a key with an unknown placeholder', { destination: 'archive', key: '{site}.png' }, /^storage\.key may use only the placeholders/],
    ];
    for (const [what, storage, message] of bad) {
      it(`answers 400 to ${what}`, async () => {
        const admin = await start();
        const answer = await admin.post('/api/screenshot', { url: 'http://127.0.0.1:9/', site_id: 'site_x', storage }).expect(400);
        expect(answer.body.error).to.match(message);
      });
    }

    it('is refused by render links with a 400 that says why', async () => {
      const admin = await start();
      const site = await admin.post('/api/sites', { allowedDomains: ['127.0.0.1'] }).expect(201);
      const key = (await admin.post('/api/keys', { name: 'links', siteId: site.body.id, unsignedLinks: true }).expect(201)).body.key as string;
      const answer = await hosted.api().get(`/api/render?key=${key}&url=${encodeURIComponent('http://127.0.0.1:9/')}&storage.destination=archive`).expect(400);
      expect(answer.body.error).to.match(/^storage cannot be asked of a render link: a link answers the image itself/);
    });
  });
});

async function uploads(outcome: string): Promise<number> {
  const metric = await apiRegistry.getSingleMetric('viewfinder_storage_uploads_total')?.get();
  return metric?.values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
}

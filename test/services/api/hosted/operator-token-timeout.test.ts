import http from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import { kubeTokenReviewer } from '../../../../services/api/src/auth/operator-token.ts';
import { loadApiConfig } from '../../../../services/api/src/config.ts';
import { expectEventually } from '../../../support/eventually.ts';
import { kubeConfigAt } from '../../../support/fake-kube-apiserver.ts';
import { createStubRenderer } from '../../../support/stub-renderer.ts';
import { startHosted, type HostedHarness } from './support.ts';

/**
 * A Kubernetes API that accepts the TokenReview and never answers: the operator routes must fail
 * closed at TOKEN_REVIEW_TIMEOUT_MS with a 503 and Retry-After, and drop the hanging request, so
 * that callers with no credentials cannot pile requests up.
 */
describe('operator routes when the Kubernetes API does not answer the TokenReview', () => {
  let silent: http.Server;
  let hanging = 0;
  let hosted: HostedHarness;

  beforeEach(async () => {
    hanging = 0;
    silent = http.createServer((req) => {
      hanging++;
      req.resume();
      req.on('close', () => hanging--);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    hosted = await startHosted({
      env: { OPERATOR_SERVICE_ACCOUNTS: 'viewfinder/viewfinder-operator' },
      tokenReviewer: kubeTokenReviewer(kubeConfigAt(silent), 'viewfinder-api', 300),
      renderer: createStubRenderer({ capacity: 1, delayMs: () => 0 }),
    });
  });
  afterEach(async () => {
    await hosted.close();
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('answers 503 with Retry-After at the deadline, and the review it gave up on is closed', async () => {
    const answer = await request(hosted.app.callback()).get('/api/operator/sites/shop/storefront').set('Authorization', 'Bearer some-token');
    expect(answer.status).to.equal(503);
    expect(answer.headers['retry-after']).to.equal('1');
    expect(answer.body).to.deep.equal({ success: false, error: 'Cannot review the token: the Kubernetes API did not answer within 300 ms' });
    await expectEventually(async () => expect(hanging).to.equal(0));
  });

  it('defaults the deadline to 3 s and checks TOKEN_REVIEW_TIMEOUT_MS', () => {
    expect(loadApiConfig({ MODE: 'hosted' }).operatorAuth.reviewTimeoutMs).to.equal(3000);
    expect(loadApiConfig({ MODE: 'hosted', TOKEN_REVIEW_TIMEOUT_MS: '500' }).operatorAuth.reviewTimeoutMs).to.equal(500);
    expect(() => loadApiConfig({ MODE: 'hosted', TOKEN_REVIEW_TIMEOUT_MS: '0' })).to.throw(/TOKEN_REVIEW_TIMEOUT_MS/);
  });
});

import http from 'node:http';
import { expect } from 'chai';
import { cachedReviewer, kubeTokenReviewer, MAX_REVIEWS_IN_FLIGHT, type ReviewedIdentity, type TokenReviewer } from '../../../../services/api/src/auth/operator-token.ts';
import { eventually } from '../../../support/eventually.ts';
import { kubeConfigAt } from '../../../support/fake-kube-apiserver.ts';

/**
 * The review cache (issue 44): refusals are remembered like admissions, by the token's hash, in a
 * bounded map of their own, and one token's callers share the review on the way.
 */
describe('the TokenReview cache', () => {
  describe('a flood of one garbage token against a slow Kubernetes API', () => {
    let slow: http.Server;
    let held: http.ServerResponse[] = [];

    beforeEach(async () => {
      held = [];
      slow = http.createServer((req, res) => {
        req.resume();
        held.push(res);
      });
      await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    });
    afterEach(async () => {
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    });

    it('answers every caller "not valid" (401) from one review, none "cannot review" (503), past the bound of reviews in flight', async () => {
      const reviewer = cachedReviewer(kubeTokenReviewer(kubeConfigAt(slow), 'viewfinder-api', 30_000), 10_000);
      const answers = Promise.allSettled(Array.from({ length: MAX_REVIEWS_IN_FLIGHT + 8 }, () => reviewer.review('garbage')));
      await eventually('the review reaches the Kubernetes API', () => held.length > 0);
      for (const res of held) {
        res.writeHead(201, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: {}, status: { authenticated: false } }));
      }
      const settled = await answers;
      expect(settled.filter((answer) => answer.status === 'rejected').map((answer) => String(answer.reason))).to.deep.equal([]);
      expect(settled.every((answer) => answer.status === 'fulfilled' && answer.value === null)).to.equal(true);
      expect(held.length).to.equal(1);
      expect(await reviewer.review('garbage')).to.equal(null);
      expect(held.length).to.equal(1);
    });
  });

  it('keeps the admitted token while many garbage tokens are refused', async () => {
    const reviewed: string[] = [];
    const inner: TokenReviewer = {
      async review(token): Promise<ReviewedIdentity> {
        reviewed.push(token);
        return token === 'operator' ? { username: 'system:serviceaccount:viewfinder:viewfinder-operator' } : null;
      },
    };
    const reviewer = cachedReviewer(inner, 10_000, () => 0, 3);
    await reviewer.review('operator');
    for (let garbage = 0; garbage < 10; garbage += 1) expect(await reviewer.review(`garbage-${garbage}`)).to.equal(null);
    expect(await reviewer.review('operator')).to.deep.equal({ username: 'system:serviceaccount:viewfinder:viewfinder-operator' });
    expect(reviewed.filter((token) => token === 'operator')).to.have.length(1);
  });

  it('forgets a refusal after the time to live, and holds no more refusals than its bound', async () => {
    let clock = 0;
    let reviews = 0;
    const reviewer = cachedReviewer({ review: async () => (reviews++, null) }, 1000, () => clock, 2);
    await reviewer.review('a');
    await reviewer.review('a');
    expect(reviews).to.equal(1);
    clock = 1000;
    await reviewer.review('a');
    expect(reviews).to.equal(2);
    await reviewer.review('b');
    await reviewer.review('c');
    await reviewer.review('a');
    expect(reviews).to.equal(5);
  });
});

import { expect } from 'chai';
import { once } from 'node:events';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess, type ServiceProcess } from '../../support/processes.ts';

/**
 * Scaling down and crashes, with real processes: an API process in front of three renderer
 * processes (real Chromium), clients capturing a page that takes a second on the network, and
 * one renderer stopped mid-run. SIGTERM (a scale-down or a rollout) must cost no client a failure;
 * neither must SIGKILL, since a capture that failed before its answer started is retried once on
 * the other renderer.
 */
describe('renderer drain and retry (real API and renderer processes)', function () {
  this.timeout(240_000);
  let fixtures: FixtureServer;
  let api: ServiceProcess;
  let renderers: ServiceProcess[];

  // One tier for both cases: three renderers, of which each case stops one.
  before(async () => {
    fixtures = await startFixtureServer();
    renderers = [];
    // One after another: Chromium starting three times at once on a loaded machine is slow.
    for (let i = 0; i < 3; i++) renderers.push(await startServiceProcess(RENDERER_MAIN, { RENDER_CONCURRENCY: '2', SHUTDOWN_TIMEOUT_MS: '60000' }, { startTimeoutMs: 120_000 }));
    api = await startServiceProcess(API_MAIN, { RENDERER_URL: renderers.map((r) => r.base).join(','), RENDERER_PROBE_INTERVAL_MS: '250' });
  });
  after(async () => {
    await Promise.all([api, ...renderers].map((p) => p.stop(5000)));
    await fixtures.close();
  });

  /** `clients` loops of captures until stop() is called; each result is recorded with its status. */
  function load(clients: number) {
    const statuses: number[] = [];
    const errors: string[] = [];
    let stopping = false;
    const loop = async () => {
      while (!stopping) {
        const response = await fetch(`${api.base}/screenshot`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url: fixtures.url('/slow?delay=1000'), wait: 1000, removeAds: false }),
        });
        const body = (await response.json()) as { error?: string };
        statuses.push(response.status);
        if (response.status !== 200) errors.push(`${response.status} ${body.error}`);
      }
    };
    const loops = Array.from({ length: clients }, loop);
    return {
      statuses,
      errors,
      async until(count: number) {
        while (statuses.length < count) await new Promise((resolve) => setTimeout(resolve, 50));
      },
      async stop() {
        stopping = true;
        await Promise.all(loops);
      },
    };
  }

  it('loses no capture when a renderer gets SIGTERM mid-run: it finishes its captures, the API sends new ones elsewhere', async () => {
    const traffic = load(4);
    await traffic.until(4);
    const leaving = renderers[0];
    const exited = once(leaving!.child, 'exit');
    leaving!.child.kill('SIGTERM');
    const [code] = await exited;
    const atExit = traffic.statuses.length;
    await traffic.until(atExit + 6);
    await traffic.stop();
    expect(code, leaving!.output().slice(-2000)).to.equal(0);
    expect(leaving!.output()).to.contain('Shut down cleanly');
    expect(traffic.errors, 'client-visible failures').to.deep.equal([]);
    expect(traffic.statuses.length).to.be.at.least(10);
  });

  it('loses no capture when a renderer is SIGKILLed mid-run: the captures in flight there are retried on the other', async () => {
    const traffic = load(4);
    await traffic.until(4);
    const killed = renderers[1];
    const exited = once(killed!.child, 'exit');
    killed!.child.kill('SIGKILL');
    await exited;
    const atKill = traffic.statuses.length;
    await traffic.until(atKill + 6);
    await traffic.stop();
    expect(traffic.errors, 'client-visible failures').to.deep.equal([]);
    expect(api.output(), 'the captures in flight on it were retried').to.match(/"reason":"ECONNRESET".*retrying on another/);
  });
});

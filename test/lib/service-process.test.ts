import { expect } from 'chai';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, fetch as undiciFetch } from 'undici';
import { API_MAIN, startServiceProcess } from '../support/processes.ts';
import { startStubRenderer, type StubRendererService } from '../support/stub-renderer.ts';

/**
 * lib/service-process.ts drains on SIGTERM without failing a request of clients that hold
 * keep-alive sockets to it, as clients of a pod do through its Service after the preStop sleep:
 * the real API process (its renderer a stub that answers in milliseconds), and undici clients,
 * each with its own pool, capturing in a loop while the process gets SIGTERM.
 */
describe('a service process draining on SIGTERM (lib/service-process.ts)', function () {
  this.timeout(120_000);
  let renderer: StubRendererService;
  before(async () => {
    renderer = await startStubRenderer({ capacity: 8, delayMs: () => 5 });
  });
  after(() => renderer.close());

  it('fails no request of keep-alive clients, busy or idle at SIGTERM, and tells each to close its socket', async () => {
    const api = await startServiceProcess(API_MAIN, { RENDERER_URL: renderer.url, DRAIN_GRACE_MS: '10000' });
    const failures: string[] = [];
    let terminated = false;
    /** One client: captures in a loop (with idle gaps), until it has had `closes` answers saying Connection: close after SIGTERM. */
    const client = async (options: { closes: number; idleAtSigterm?: boolean }) => {
      const agent = new Agent({ keepAliveTimeout: 60_000 });
      let answered = 0;
      let closes = 0;
      try {
        while (closes < options.closes && failures.length === 0) {
          if (options.idleAtSigterm && answered > 0) while (!terminated) await sleep(10);
          try {
            const response = await undiciFetch(`${api.base}/screenshot`, {
              dispatcher: agent,
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ url: 'http://127.0.0.1:9/', removeAds: false }),
            });
            await response.arrayBuffer();
            if (response.status !== 200) failures.push(`answered ${response.status}`);
            answered += 1;
            if (terminated && response.headers.get('connection') === 'close') closes += 1;
          } catch (err) {
            const cause = (err as { cause?: { code?: string; message?: string } }).cause;
            failures.push(`${terminated ? 'after' : 'before'} SIGTERM: ${cause?.code ?? ''} ${cause?.message ?? String(err)}`);
          }
          await sleep(Math.random() * 20);
        }
      } finally {
        await agent.close();
      }
      return answered;
    };
    const busy = Array.from({ length: 4 }, () => client({ closes: 3 }));
    const idle = client({ closes: 1, idleAtSigterm: true });
    while (renderer.renderer.completed() < 40 && failures.length === 0) await sleep(20);
    const exited = once(api.child, 'exit');
    api.child.kill('SIGTERM');
    terminated = true;
    const answered = await Promise.all([...busy, idle]);
    const [code] = await exited;

    expect(failures, api.output()).to.deep.equal([]);
    expect(answered.every((count) => count > 0)).to.equal(true);
    expect(code, api.output()).to.equal(0);
    expect(api.output()).to.match(/Shut down cleanly/);
  });
});

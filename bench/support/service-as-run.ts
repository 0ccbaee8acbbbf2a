import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultConcurrency } from '../../services/renderer/src/config.ts';
import { closedPort } from '../../test/support/fixture-server.ts';
import { API_MAIN, startServiceProcess, type ServiceProcess } from '../../test/support/processes.ts';

/**
 * What `make run` gets by default, but for the fixture pages on loopback, which the network guard
 * refuses unless allowed; it also undoes the test harness's settings that startServiceProcess adds
 * (a smaller pool, a lower full-page cap, no logs). The bench's own environment passes
 * RENDER_CONCURRENCY, FULL_PAGE_MAX_HEIGHT and LOG_LEVEL through, as a shell would to `make run`.
 */
export const SERVICE_AS_RUN_ENV = {
  PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8',
  RENDER_CONCURRENCY: process.env.RENDER_CONCURRENCY ?? String(defaultConcurrency()),
  FULL_PAGE_MAX_HEIGHT: process.env.FULL_PAGE_MAX_HEIGHT ?? '16384',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
};

/**
 * The API (or `main`, another tree's for a baseline) as its own process, as `make run` starts it:
 * self-hosted, the in-process Chromium pool, the job runner on the embedded store in a throwaway
 * DATA_DIR (removed on stop), the result cache and metrics. `env` overrides any of it (MODE,
 * DATA_DIR, NODE_OPTIONS, ...). Its port is chosen here, since a quiet log level never says it.
 */
export async function startServiceAsRun(env: Record<string, string> = {}, main = API_MAIN): Promise<ServiceProcess> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-bench-data-'));
  const service = await startServiceProcess(main, { ...SERVICE_AS_RUN_ENV, DATA_DIR: dataDir, ...env }, { port: await closedPort() });
  return {
    ...service,
    async stop(graceMs, signal) {
      try {
        return await service.stop(graceMs, signal);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

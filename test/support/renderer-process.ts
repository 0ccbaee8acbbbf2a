/**
 * A renderer in a process of its own, for tests that SIGKILL the whole service. Reads its settings
 * from the environment like the service does, starts the pool, says "ready" and waits.
 */
import { loadRendererConfig } from '../../services/renderer/src/config.ts';
import { createChromiumRenderer } from '../../services/renderer/src/pool.ts';
import { silentLogger } from './harness.ts';

await createChromiumRenderer(loadRendererConfig(process.env), silentLogger);
process.stdout.write('ready\n');
setInterval(() => {}, 60_000);

import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../lib/logger.ts';

/** A logger at the most verbose level that collects every line it writes, for tests that read the logs. */
export function capturedLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger({ level: 'trace' }, destination), lines };
}

import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../lib/logger.ts';

/** A real pino logger whose lines are kept in memory, for tests that read what a service logged. */
export interface CapturedLog {
  logger: Logger;
  text(): string;
  lines(): Record<string, unknown>[];
}

export function captureLog(name: string, level = 'debug'): CapturedLog {
  let text = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return {
    logger: createLogger({ name, level }, sink),
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

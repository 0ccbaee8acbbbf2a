import type Koa from 'koa';
import { startFixtureServer, type FixtureServer } from './fixture-server.ts';
import { appWith, startRenderer, testConfig } from './harness.ts';
import { startSecretServer, type SecretServer } from './secret-server.ts';

/** The network guard's test bed; its fields are set once the suite's `before` hook has run. */
export interface GuardBed {
  /** Fixture pages on 127.0.0.2, the only allowlisted address. */
  fixtures: FixtureServer;
  /** The service the pages try to reach, on 127.0.0.1; reset before each test. */
  secret: SecretServer;
  /** The self-hosted API on a renderer that allows 127.0.0.2 only. */
  app: Koa;
}

/** Registers the mocha hooks that start and stop the bed, in the calling describe. */
export function useGuardBed(): GuardBed {
  const env = { PRIVATE_NETWORK_ALLOWLIST: '127.0.0.2' };
  const bed = {} as GuardBed;
  before(async () => {
    bed.secret = await startSecretServer();
    bed.fixtures = await startFixtureServer('127.0.0.2');
    bed.app = appWith(await startRenderer(testConfig(env)), env);
  });
  after(async () => {
    await bed.fixtures?.close();
    await bed.secret?.close();
  });
  beforeEach(() => bed.secret.reset());
  return bed;
}

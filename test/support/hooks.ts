import { closeAllRenderers } from './harness.ts';

/** Mocha root hooks: Chromium pools started by any test file are closed once the suite ends. */
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await closeAllRenderers();
  },
};

/**
 * `describe(title)` whose body runs only when `server` is there (a test server the suite was given
 * through the environment); without it the describe holds a single test that skips, printing why
 * and how to get one, so that a skipped leg is never silent.
 */
export function describeWithServer<T>(title: string, server: T | undefined, skipped: { test: string; why: string }, body: (this: Mocha.Suite, server: T) => void): void {
  describe(title, function () {
    if (server === undefined) {
      it(skipped.test, function () {
        console.log(`      (skipped: ${skipped.why})`);
        this.skip();
      });
      return;
    }
    body.call(this, server);
  });
}

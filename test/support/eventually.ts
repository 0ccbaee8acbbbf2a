/** Polls `condition` every 25 ms until it holds; fails after `timeoutMs` with `what`. */
export async function eventually(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Waits until `check`'s assertions hold; past the deadline, its own assertion error is the failure, not a bare timeout. */
export async function expectEventually(check: () => Promise<unknown>, timeoutMs = 15_000): Promise<void> {
  const holds = () => check().then(
    () => true,
    () => false,
  );
  await eventually('the expectation holds', holds, timeoutMs).catch(async () => {
    await check();
  });
}

/**
 * The image's HEALTHCHECK. One image runs the API, the renderer or the operator, each on its own
 * port variable, so the check asks /healthz on all three and passes when one of them answers 200.
 * Node's fetch, because the slim base has no curl or wget.
 */
const ports = [
  process.env.PORT ?? '3000',
  process.env.RENDERER_PORT ?? '3001',
  process.env.OPERATOR_PORT ?? '8081',
];

async function healthy(port: string): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(3000) });
  if (response.status !== 200) throw new Error(`port ${port}: /healthz answered ${response.status}`);
}

try {
  await Promise.any(ports.map(healthy));
  process.exit(0);
} catch {
  console.error(`healthcheck: no /healthz answered 200 on ports ${ports.join(', ')}`);
  process.exit(1);
}

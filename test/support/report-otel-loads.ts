/**
 * Preloaded into a service process (NODE_OPTIONS=--import=<this file>): writes one line
 * `otel-module-loaded <url> <- <importer's url>` to stderr for every @opentelemetry module the
 * process resolves, by import or require, static or dynamic. test/lib/tracing.test.ts reads them.
 */
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (resolved.url.includes('/node_modules/@opentelemetry/')) process.stderr.write(`otel-module-loaded ${resolved.url} <- ${context.parentURL}\n`);
    return resolved;
  },
});

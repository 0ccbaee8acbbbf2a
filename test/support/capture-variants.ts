import { expect } from 'chai';
import type Koa from 'koa';
import request from 'supertest';
import { createApp } from '../../services/api/src/app.ts';
import type { Renderer } from '../../services/renderer/src/renderer.ts';
import { silentLogger, testConfig } from './harness.ts';
import { startHosted, type HostedHarness } from '../services/api/hosted/support.ts';

export interface CaptureClient {
  post(body: Record<string, unknown>, accept?: string): request.Test;
  close(): Promise<void>;
  /** Hosted only: the key's usage as GET /api/usage reports it for the site posted to. */
  usage?(): Promise<{ captures: number; failures: number; bytes: number }>;
}

/** Each variant posts a capture its own way; the capture options must behave the same through both. */
export interface CaptureVariant {
  name: string;
  start(renderer: Renderer): Promise<CaptureClient>;
}

/** POST /screenshot and POST /api/screenshot (with a full-access key and a site of its own), on `env`. */
export function captureVariants(env: Record<string, string>): CaptureVariant[] {
  return [
    {
      name: 'self-hosted POST /screenshot',
      async start(renderer) {
        const app: Koa = createApp({ config: testConfig(env), renderer, logger: silentLogger });
        return {
          post: (body, accept) => {
            const test = request(app.callback()).post('/screenshot').set('Content-Type', 'application/json');
            return (accept ? test.set('Accept', accept) : test).send(body);
          },
          close: async () => undefined,
        };
      },
    },
    {
      name: 'hosted POST /api/screenshot',
      async start(renderer) {
        const hosted: HostedHarness = await startHosted({ renderer, env });
        const site = await hosted.api(hosted.fullKey).post('/api/sites', { allowedDomains: [] });
        return {
          post: (body, accept) => {
            const test = hosted.api(hosted.fullKey).post('/api/screenshot');
            return (accept ? test.set('Accept', accept) : test).set('Content-Type', 'application/json').send({ ...body, site_id: site.body.id });
          },
          close: () => hosted.close(),
          usage: async () => (await hosted.api(hosted.fullKey).get('/api/usage').expect(200)).body.sites[site.body.id],
        };
      },
    },
  ];
}

/**
 * One describe per variant of `env`, its client started on `renderer()` before the variant's tests
 * and closed after them. `define` gets a client that forwards to it, usable as soon as the tests run.
 */
export function describeEachVariant(env: Record<string, string>, renderer: () => Renderer, define: (api: CaptureClient, variant: CaptureVariant) => void): void {
  for (const variant of captureVariants(env)) {
    describe(variant.name, () => {
      let started: CaptureClient | undefined;
      const client = () => started ?? assertNever('the variant has not started');
      before(async () => {
        started = await variant.start(renderer());
      });
      after(() => started?.close());
      define({ post: (body, accept) => client().post(body, accept), close: () => client().close(), usage: () => (client().usage ?? (() => assertNever('usage is hosted only')))() }, variant);
    });
  }
}

function assertNever(message: string): never {
  throw new Error(message);
}

/** A 200, or the failure shows the body's start. */
export function expectOk(response: request.Response): void {
  expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);
}

import { readFileSync } from 'node:fs';
import type { Middleware } from 'koa';
import { NotFound } from '../../../../lib/errors.ts';

/**
 * The dashboard's two static files, read once at start-up and served by the API itself: the CSP
 * allows nothing from anywhere else, and nothing needs a build step.
 */
const ASSETS: Record<string, { type: string; body: Buffer }> = {
  'dashboard.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('./assets/dashboard.css', import.meta.url)) },
  'dashboard.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('./assets/dashboard.js', import.meta.url)) },
};

export function serveAsset(): Middleware {
  return async (ctx) => {
    const asset = ASSETS[String(ctx.params.file)];
    if (!asset) throw new NotFound(`No dashboard asset ${String(ctx.params.file)}`);
    ctx.set({ 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'public, max-age=300' });
    ctx.type = asset.type;
    ctx.body = asset.body;
  };
}

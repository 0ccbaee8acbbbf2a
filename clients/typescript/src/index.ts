/**
 * @viewfinder/client: the TypeScript/Node.js client for Viewfinder. No runtime dependency: the
 * global fetch, AbortSignal, and node:crypto for render links and webhooks, which are server-side
 * operations (they need a secret that must never reach a browser).
 */
export { Viewfinder, OPERATIONS, type ViewfinderOptions } from './client.ts';
export type { Mode, SignParams, WaitOptions } from './resources.ts';
export { Captures, Destinations, Keys, Monitors, RenderLinks, Screenshots, Sites, UsageResource, Webhooks } from './resources.ts';
export type { RequestOptions, RetryInfo } from './http.ts';
export * from './errors.ts';
export * from './types.ts';
export { RENDER_PATH, linkParameters, renderLinkSignature, signRenderLink, type RenderLinkOptions, type RenderLinkParams } from './render-links.ts';
export {
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  constructWebhookEvent,
  signWebhook,
  verifyWebhookSignature,
  type RawBody,
  type SignatureHeaderValue,
  type VerifyOptions,
} from './webhooks.ts';
export { VERSION } from './version.ts';
import { Viewfinder } from './client.ts';
export default Viewfinder;

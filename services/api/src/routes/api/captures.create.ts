import type { ErrorObject } from 'ajv';
import { ServiceUnavailable } from '../../../../../lib/errors.ts';
import { principalOf } from '../../auth/hosted-key.ts';
import { MAX_BATCH } from '../../captures/config.ts';
import { sendAccepted, type Submission } from '../../captures/service.ts';
import { submitParser, submitSchemas } from '../../captures/submit-body.ts';
import { captureOptionsProblems, withoutReport } from '../capture-options.ts';
import { screenshotMessages, toCaptureRequest } from '../screenshot.ts';
import type { ApiRoute } from './route.ts';
import { checkDomain, resolveSite } from './hosted-capture.ts';
import { hostedScreenshotBodySchema, type HostedScreenshotBody } from './screenshot.post.ts';
import { storageOptionMessages, storageOptionProblems } from '../../storage/schemas.ts';

const asyncBody = withoutReport(hostedScreenshotBodySchema, 'an asynchronous capture');
export const hostedSubmitSchemas = submitSchemas(asyncBody.schema);

const parse = submitParser<HostedScreenshotBody>(
  hostedSubmitSchemas.single,
  [
    asyncBody.message,
    ...storageOptionMessages,
    ...screenshotMessages,
    (e: ErrorObject) => (e.instancePath === '/site_id' ? 'site_id must be a non-empty string of at most 64 characters' : undefined),
  ],
  (body) => [...captureOptionsProblems(body), ...storageOptionProblems(body)],
);

const acceptedSchema = {
  type: 'object',
  required: ['id', 'status', 'statusUrl'],
  properties: {
    id: { type: 'string', description: 'job_…' },
    status: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed'], description: 'queued for a new capture; an idempotent repeat answers the state of the capture it names' },
    statusUrl: { type: 'string', description: 'GET it for the status and the result (also the Location header)' },
  },
};

export const createCaptureRoute: ApiRoute = {
  method: 'POST',
  path: '/api/captures',
  operationId: 'submitCaptures',
  summary: 'Submit an asynchronous capture, or a batch of them',
  description:
    'Answers 202 once the capture is durably queued. The body is that of POST /api/screenshot plus webhookUrl and idempotencyKey (or the Idempotency-Key header), ' +
    `or { "captures": [...] } with up to ${MAX_BATCH} of those. Checks at submit, in order: the key (401), each capture's site (400, 404, 403) and domain (403), ` +
    'its storage destination (400 when the account has none of that name, 403 when the network guard refuses its endpoint), ' +
    'the webhook target (400, 403: the network guard), the signing secret (409), the account\'s bound on waiting captures (429), the rate limit, one capture per capture submitted (429).',
  tag: 'Captures',
  access: 'any-key',
  body: hostedSubmitSchemas.either,
  responses: {
    202: {
      description: 'Queued: the single form answers one { id, status, statusUrl } with a Location header; the batch form { captures: [...] }, one per capture, in order.',
      schema: { anyOf: [acceptedSchema, { type: 'object', required: ['captures'], properties: { captures: { type: 'array', items: acceptedSchema } } }] },
      headers: { Location: { description: 'Single form: the statusUrl', schema: { type: 'string' } } },
    },
  },
  errors: {
    403: 'The URL\'s host is not among the site\'s allowed domains, the site key belongs to another site, or the webhook target or the storage destination\'s endpoint is refused by the network guard',
    404: 'The site does not exist or belongs to another account',
    409: 'A webhookUrl was given but the key has no signing secret (regenerate it)',
    429: 'Rate limit exceeded, or the account has too many captures waiting (ASYNC_MAX_QUEUED_PER_ACCOUNT); see Retry-After',
    503: 'Asynchronous captures are turned off on this service (ASYNC_CAPTURES=false)',
  },
  handler: ({ store, limiter, captures, storage: destinations }) =>
    async (ctx) => {
      if (!captures) throw new ServiceUnavailable('Asynchronous captures are turned off on this service');
      const { batch, items } = parse(ctx);
      const { key, account } = principalOf(ctx);
      const submissions: Submission[] = [];
      for (const { site_id: siteId, webhookUrl, idempotencyKey, storage, ...body } of items) {
        const site = await resolveSite(store, key, siteId);
        checkDomain(key, site, body);
        if (storage) await destinations.prepareLater(account.id, storage);
        // The domains travel with the capture, so that the renderer holds every page it loads to them.
        const scope = key.restrictDomains ? { allowedDomains: site.allowedDomains } : {};
        submissions.push({
          request: { ...toCaptureRequest(body), ...scope },
          webhookUrl,
          storage,
          cacheTtl: body.cacheTtl,
          // Idempotency keys are the site's own: another site's key with the same key is another capture.
          idempotencyKey: idempotencyKey === undefined ? undefined : `${site.id}:${idempotencyKey}`,
          hosted: { accountId: account.id, siteId: site.id, keyId: key.id },
        });
      }
      const accepted = await captures.submit(
        {
          ctx,
          ownerId: account.id,
          basePath: '/api/captures',
          consumeRateLimit: () => limiter.consume(ctx, key.id, account.rateLimitPerMinute),
          canSign: async () => (await store.getSigningSecret(key.id)) !== null,
        },
        submissions,
      );
      sendAccepted(ctx, accepted, batch);
    },
};

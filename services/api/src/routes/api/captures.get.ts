import { ServiceUnavailable } from '../../../../../lib/errors.ts';
import { principalOf } from '../../auth/hosted-key.ts';
import { IMAGE_FORMATS, MIME_TYPES } from '../../../../renderer/src/capture/image-formats.ts';
import { captureStatusSchema } from '../../captures/status-schema.ts';
import { param, type ApiRoute } from './route.ts';

export const getCaptureRoute: ApiRoute = {
  method: 'GET',
  path: '/api/captures/:captureId',
  operationId: 'getCapture',
  summary: 'The status of an asynchronous capture, and its result',
  description:
    'State, timestamps, attempts and the webhook\'s deliveries; once succeeded, the result in POST /api/screenshot\'s shape, or the image bytes with Accept: image/*. ' +
    'Results are kept CAPTURE_RESULT_TTL_SECONDS (24 h by default) after they finish, then removed: a removed, unknown or other account\'s id is a 404, and so is another site\'s for a site key.',
  tag: 'Captures',
  access: 'any-key',
  responses: {
    200: {
      description: 'The status as JSON (with `result` once succeeded), or the image itself when Accept asks for an image type.',
      schema: captureStatusSchema,
      alternatives: Object.fromEntries(IMAGE_FORMATS.map((format) => [MIME_TYPES[format], { type: 'string', contentMediaType: MIME_TYPES[format] }])),
    },
  },
  errors: {
    406: 'Accept allows neither JSON nor the image type of the capture',
    409: 'An image was asked for but the capture has not succeeded (yet)',
    503: 'Asynchronous captures are turned off on this service (ASYNC_CAPTURES=false)',
  },
  handler: ({ captures }) =>
    async (ctx) => {
      if (!captures) throw new ServiceUnavailable('Asynchronous captures are turned off on this service');
      const { account, key } = principalOf(ctx);
      // A site key sees only its site's captures; a full-access key, every site's.
      await captures.answerStatus(ctx, account.id, param(ctx.params, 'captureId'), key.kind === 'site' ? key.siteId : null);
    },
};

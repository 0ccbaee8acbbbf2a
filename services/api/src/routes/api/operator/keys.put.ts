import { managedOperations } from '../../../../../../lib/management.ts';
import type { PutManagedKey } from '../../../../../../lib/operator-api.ts';
import { compileValidator } from '../../../validation.ts';
import type { ApiRoute } from '../route.ts';
import { ownerOf, putManagedKeyAnswerSchema, putManagedKeySchema } from './schemas.ts';

const validate = compileValidator<PutManagedKey>(putManagedKeySchema, []);

export const putManagedKeyRoute: ApiRoute = {
  method: 'PUT',
  path: '/api/operator/keys/:namespace/:name',
  operationId: 'operatorPutKey',
  summary: 'Create or update the key that an ApiKey resource owns; a new key comes back once',
  description:
    'Idempotent: the key is matched on the resource (kind, namespace, name). When this call creates it, the answer is 201 with the plaintext in `key`, shown once; otherwise 200 with `key: null` (the secret is unchanged).',
  tag: 'Operator',
  access: 'operator',
  body: putManagedKeySchema,
  responses: {
    200: { description: 'The key, updated; `key` is null', schema: putManagedKeyAnswerSchema },
    201: { description: 'The key, created; `key` holds its plaintext', schema: putManagedKeyAnswerSchema },
  },
  errors: { 404: 'siteId names no site of the account', 409: 'The key belongs to another account' },
  handler: ({ store }) =>
    async (ctx) => {
      const answer = await managedOperations(store).putKey(...ownerOf(ctx.params), validate(ctx.request.body));
      ctx.status = answer.key === null ? 200 : 201;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = answer;
    },
};

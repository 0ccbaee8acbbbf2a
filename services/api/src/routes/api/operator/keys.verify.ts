import { managedOperations } from '../../../../../../lib/management.ts';
import { compileValidator } from '../../../validation.ts';
import type { ApiRoute } from '../route.ts';
import { ownerOf, verifyKeySchema } from './schemas.ts';

const validate = compileValidator<{ keyHash: string }>(verifyKeySchema, [
  (e) => (e.keyword === 'pattern' ? 'keyHash must be the SHA-256 of the key, in lowercase hex' : undefined),
]);

export const verifyManagedKeyRoute: ApiRoute = {
  method: 'POST',
  path: '/api/operator/keys/:namespace/:name/verify',
  operationId: 'operatorVerifyKey',
  summary: 'Check that a Secret still holds the current key, by its hash',
  description: 'The caller sends the SHA-256 of the plaintext it holds, never the key; the API compares it in constant time.',
  tag: 'Operator',
  access: 'operator',
  body: verifyKeySchema,
  responses: {
    200: { description: 'Whether the hash is the key\'s current one', schema: { type: 'object', required: ['matches'], properties: { matches: { type: 'boolean' } } } },
  },
  errors: { 404: 'No key is managed by that ApiKey' },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.body = { matches: await managedOperations(store).keyMatches(...ownerOf(ctx.params), validate(ctx.request.body).keyHash) };
    },
};

import { compileValidator } from '../../validation.ts';
import { principalOf } from '../../auth/hosted-key.ts';
import { destinationOperations, type DestinationInput } from '../../storage/destinations.ts';
import { createDestinationSchema, destinationMessages, destinationProblems, destinationViewSchema } from '../../storage/schemas.ts';
import type { ApiRoute } from './route.ts';

export const validate = compileValidator<DestinationInput>(createDestinationSchema, destinationMessages, destinationProblems);

export const createDestinationRoute: ApiRoute = {
  method: 'POST',
  path: '/api/destinations',
  operationId: 'createDestination',
  summary: 'Register a storage destination: an S3-compatible bucket captures can be written to',
  description:
    'The endpoint passes the network guard now (and again at every upload). The credentials are stored sealed and never answered; captures name the destination, never the credentials.',
  tag: 'Storage',
  access: 'full-access',
  body: createDestinationSchema,
  responses: { 201: { description: 'The destination, without its credentials', schema: destinationViewSchema } },
  errors: {
    403: 'The key is scoped to a site; or the endpoint is refused by the network guard (a loopback, private, link-local or metadata address)',
    409: 'The account already has a destination of that name',
    503: 'The endpoint\'s name did not resolve in time; try again',
  },
  handler: ({ store, storage }) =>
    async (ctx) => {
      const input = validate(ctx.request.body);
      ctx.status = 201;
      ctx.body = await destinationOperations(store, storage, principalOf(ctx).account.id).create(input);
    },
};

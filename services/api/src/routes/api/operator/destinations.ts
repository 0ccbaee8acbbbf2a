/**
 * The operator's routes for the storage destination a Kubernetes Site's spec.storage declares
 * (issue #43): found by the Site (namespace and name), written whole by an idempotent PUT with the
 * credentials the operator read from the Site's Secret, deleted with the field or the Site.
 */
import type { PutManagedDestination } from '../../../../../../lib/operator-api.ts';
import { managedDestinationOperations } from '../../../storage/destinations.ts';
import { createDestinationSchema, destinationMessages, destinationProblems, destinationViewSchema } from '../../../storage/schemas.ts';
import { compileValidator } from '../../../validation.ts';
import type { ApiRoute, JsonSchema } from '../route.ts';
import { managedDeletedSchema, ownerOf } from './schemas.ts';

const managedDestinationSchema: JsonSchema = {
  ...destinationViewSchema,
  required: [...destinationViewSchema.required, 'accountId'],
  properties: { ...destinationViewSchema.properties, accountId: { type: 'string' } },
};

export const putManagedDestinationSchema = {
  ...createDestinationSchema,
  required: ['accountId', 'uid', 'name', 'endpoint', 'bucket', 'region', 'pathStyle', 'keyTemplate', 'credentials'],
  properties: {
    ...createDestinationSchema.properties,
    accountId: { type: 'string', minLength: 1, maxLength: 64, description: 'The account (acct_...) the destination belongs to.' },
    uid: { type: 'string', minLength: 1, maxLength: 128, description: "The Site's metadata.uid." },
  },
} as const;

const validate = compileValidator<PutManagedDestination>(putManagedDestinationSchema, destinationMessages, destinationProblems);
const PATH = '/api/operator/destinations/:namespace/:name';

export const getManagedDestinationRoute: ApiRoute = {
  method: 'GET',
  path: PATH,
  operationId: 'operatorGetDestination',
  summary: "Get the storage destination a Site's spec.storage declares",
  tag: 'Operator',
  access: 'operator',
  responses: { 200: { description: 'The destination, without its credentials', schema: managedDestinationSchema } },
  errors: { 404: 'No destination is managed by that Site' },
  handler: ({ store, storage }) =>
    async (ctx) => {
      ctx.body = await managedDestinationOperations(store, storage).get(...ownerOf(ctx.params));
    },
};

export const putManagedDestinationRoute: ApiRoute = {
  method: 'PUT',
  path: PATH,
  operationId: 'operatorPutDestination',
  summary: "Create or replace the storage destination a Site's spec.storage declares, credentials included",
  description:
    'Idempotent: matched on the Site (namespace, name). The endpoint passes the network guard; a refused one is a 400 naming spec.storage.endpoint.',
  tag: 'Operator',
  access: 'operator',
  body: putManagedDestinationSchema,
  responses: {
    200: { description: 'The destination, replaced', schema: managedDestinationSchema },
    201: { description: 'The destination, created', schema: managedDestinationSchema },
  },
  errors: {
    400: 'A field is invalid, or the endpoint is refused by the network guard or does not resolve',
    409: 'The Site belongs to another account, or the account has another destination of that name',
    503: "The endpoint's name did not resolve in time",
  },
  handler: ({ store, storage }) =>
    async (ctx) => {
      const { destination, created } = await managedDestinationOperations(store, storage).put(...ownerOf(ctx.params), validate(ctx.request.body));
      ctx.status = created ? 201 : 200;
      ctx.body = destination;
    },
};

export const deleteManagedDestinationRoute: ApiRoute = {
  method: 'DELETE',
  path: PATH,
  operationId: 'operatorDeleteDestination',
  summary: "Delete the storage destination a Site's spec.storage declared",
  description: 'Idempotent: answers 200 with `deleted: null` when there is none. Objects already written stay in the bucket.',
  tag: 'Operator',
  access: 'operator',
  responses: { 200: { description: 'The name of the deleted destination, or null', schema: managedDeletedSchema } },
  handler: ({ store, storage }) =>
    async (ctx) => {
      ctx.body = { deleted: await managedDestinationOperations(store, storage).delete(...ownerOf(ctx.params)) };
    },
};

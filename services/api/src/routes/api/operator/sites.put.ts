import { managedOperations } from '../../../../../../lib/management.ts';
import type { PutManagedSite } from '../../../../../../lib/operator-api.ts';
import { compileValidator } from '../../../validation.ts';
import type { ApiRoute } from '../route.ts';
import { managedSiteSchema, ownerOf, putManagedSiteSchema } from './schemas.ts';

const validate = compileValidator<PutManagedSite>(putManagedSiteSchema, []);

export const putManagedSiteRoute: ApiRoute = {
  method: 'PUT',
  path: '/api/operator/sites/:namespace/:name',
  operationId: 'operatorPutSite',
  summary: 'Create or update the site that a Site resource owns',
  description: 'Idempotent: the site is matched on the resource (kind, namespace, name), so a retried call never makes a second one. Domains are normalized as in createSite.',
  tag: 'Operator',
  access: 'operator',
  body: putManagedSiteSchema,
  responses: { 200: { description: 'The site, updated', schema: managedSiteSchema }, 201: { description: 'The site, created', schema: managedSiteSchema } },
  errors: { 409: 'The site belongs to another account' },
  handler: ({ store }) =>
    async (ctx) => {
      const { site, created } = await managedOperations(store).putSite(...ownerOf(ctx.params), validate(ctx.request.body));
      ctx.status = created ? 201 : 200;
      ctx.body = site;
    },
};

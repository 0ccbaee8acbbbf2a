import { managedOperations } from '../../../../../../lib/management.ts';
import { param, type ApiRoute } from '../route.ts';

export const getOperatorAccountRoute: ApiRoute = {
  method: 'GET',
  path: '/api/operator/accounts/:accountId',
  operationId: 'operatorGetAccount',
  summary: 'Check that an account exists (the operator never creates accounts)',
  tag: 'Operator',
  access: 'operator',
  responses: {
    200: {
      description: 'The account',
      schema: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } },
    },
  },
  errors: { 404: 'No such account' },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.body = await managedOperations(store).accountExists(param(ctx.params, 'accountId'));
    },
};

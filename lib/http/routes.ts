import type { Middleware } from 'koa';
import Router from '@koa/router';
import { MethodNotAllowed } from '../errors.ts';

export interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  handlers: Middleware[];
}

/** Registers each route, then answers 405 with an Allow header for any other method on its path. */
export function routerFor(routes: Route[]): Router {
  const router = new Router();
  const methodsByPath = new Map<string, string[]>();
  for (const route of routes) {
    router.register(route.path, [route.method], route.handlers);
    const methods = methodsByPath.get(route.path) ?? [];
    methods.push(route.method, ...(route.method === 'GET' ? ['HEAD'] : []));
    methodsByPath.set(route.path, methods);
  }
  for (const [path, methods] of methodsByPath) {
    router.all(path, () => {
      throw new MethodNotAllowed(methods);
    });
  }
  return router;
}

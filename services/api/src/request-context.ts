// Shared with the renderer service; it lives in lib/http.
export { requestContext } from '../../../lib/http/request-context.ts';

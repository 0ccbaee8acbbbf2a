// Shared with the renderer service; it lives in lib/http.
export { jsonBody } from '../../../lib/http/json-body.ts';

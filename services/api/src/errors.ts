// The translator is shared with the renderer service; it lives in lib/http so both use the same one.
export { errorTranslator } from '../../../lib/http/error-translator.ts';

/** The library's version; a test checks that it is package.json's. */
export const VERSION = '0.1.0';

/** The shared vectors (clients/vectors/), byte for byte: the same file the server's own tests read. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { constructWebhookEvent, renderLinkSignature, signRenderLink, signWebhook, verifyWebhookSignature, WebhookSignatureError } from '../src/index.ts';
import { REPO_ROOT } from './service.ts';

interface LinkVector {
  name: string;
  origin: string;
  keyId: string;
  signingSecret: string;
  expires?: number;
  options: Array<[string, string]>;
  signedQuery: string;
  signature: string;
  link: string;
}
interface WebhookVectors {
  sign: Array<{ name: string; secret: string; timestamp: number; body: string; header: string }>;
  verify: Array<{ name: string; secret: string; header: string; body: string; now: number; toleranceSeconds: number; valid: boolean }>;
}

const read = <T>(name: string): T => JSON.parse(readFileSync(path.join(REPO_ROOT, 'clients/vectors', name), 'utf8')) as T;
const links = read<{ vectors: LinkVector[] }>('render-links.json').vectors;
const webhooks = read<WebhookVectors>('webhooks.json');

describe('render-link vectors', () => {
  assert.ok(links.length >= 5);
  for (const vector of links) {
    test(vector.name, () => {
      const link = signRenderLink({
        origin: vector.origin,
        keyId: vector.keyId,
        signingSecret: vector.signingSecret,
        options: vector.options,
        ...(vector.expires !== undefined ? { expires: vector.expires } : {}),
      });
      assert.equal(link, vector.link);
      assert.equal(renderLinkSignature(vector.signedQuery, vector.signingSecret), vector.signature);
      assert.ok(link.endsWith(`?${vector.signedQuery}&signature=${vector.signature}`));
    });
  }
});

describe('webhook vectors', () => {
  for (const vector of webhooks.sign) {
    test(`sign: ${vector.name}`, () => {
      assert.equal(signWebhook(vector.body, vector.secret, vector.timestamp), vector.header);
      // The raw bytes sign the same as the text.
      assert.equal(signWebhook(Buffer.from(vector.body, 'utf8'), vector.secret, vector.timestamp), vector.header);
    });
  }
  for (const vector of webhooks.verify) {
    test(`verify: ${vector.name}`, () => {
      const options = { now: new Date(vector.now * 1000), toleranceSeconds: vector.toleranceSeconds };
      assert.equal(verifyWebhookSignature(vector.body, vector.header, vector.secret, options), vector.valid);
      assert.equal(verifyWebhookSignature(new TextEncoder().encode(vector.body), vector.header, vector.secret, options), vector.valid);
      if (vector.valid) {
        assert.deepEqual(constructWebhookEvent(vector.body, vector.header, vector.secret, options), JSON.parse(vector.body));
      } else {
        assert.throws(() => constructWebhookEvent(vector.body, vector.header, vector.secret, options), WebhookSignatureError);
      }
    });
  }
});

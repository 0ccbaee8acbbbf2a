import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { signRenderLink, signatureMatches, splitSignedQuery } from '../../lib/render-links.ts';
import { signatureOf, verifySignature } from '../../lib/webhook-signature.ts';
import { VIEWFINDER_BIN } from '../support/viewfinder-cli.ts';

/**
 * clients/vectors/: the one set of signing vectors that the server and the three client libraries
 * (clients/typescript, clients/python, clients/go, each testing them with its own runner) must all
 * reproduce byte for byte. Here: the server's own code, and the three ways docs/render-links.md
 * shows to sign a link (the CLI, openssl, the Node snippet), agree with every vector.
 */
const root = path.join(import.meta.dirname, '..', '..');
const readVectors = (name: string) => JSON.parse(readFileSync(path.join(root, 'clients', 'vectors', name), 'utf8'));

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
interface SignVector {
  name: string;
  secret: string;
  timestamp: number;
  body: string;
  header: string;
}
interface VerifyVector {
  name: string;
  secret: string;
  header: string;
  body: string;
  now: number;
  toleranceSeconds: number;
  valid: boolean;
}

const links: LinkVector[] = readVectors('render-links.json').vectors;
const webhooks: { sign: SignVector[]; verify: VerifyVector[] } = readVectors('webhooks.json');

/** The Node snippet of docs/render-links.md ("Build a link in Node"), its function alone, as a reader pastes it. */
function docsNodeRenderLink(): (api: string, keyId: string, secret: string, options: Array<[string, string]>, expiresIn?: number) => string {
  const doc = readFileSync(path.join(root, 'docs', 'render-links.md'), 'utf8');
  const snippet = [...doc.matchAll(/```js\n([\s\S]*?)```/g)].map(([, body]) => body as string).find((body) => body.includes('function renderLink('));
  if (!snippet) throw new Error('docs/render-links.md has no Node snippet with function renderLink(');
  const fn = /function renderLink\([\s\S]*?\n}\n/.exec(snippet)?.[0];
  if (!fn) throw new Error('the Node snippet has no renderLink function');
  return vm.runInNewContext(`(${fn})`, { URLSearchParams, createHmac, Date, Math, String });
}

describe('clients/vectors: the server and the docs sign as the vectors say', () => {
  it('has vectors of every kind: with and without expiry, and characters that form encoders disagree on', () => {
    expect(links.some((v) => v.expires === undefined)).to.equal(true);
    expect(links.some((v) => v.expires !== undefined)).to.equal(true);
    expect(links.some((v) => v.options.some(([, value]) => /[~*' ()!]/.test(value)))).to.equal(true);
    expect(webhooks.verify.some((v) => v.valid)).to.equal(true);
    expect(webhooks.verify.some((v) => !v.valid)).to.equal(true);
  });

  for (const vector of links) {
    describe(`render link: ${vector.name}`, () => {
      it("lib/render-links.ts builds the link byte for byte, and the server's check accepts it", () => {
        const { name: _name, signedQuery: _q, signature: _s, link: _l, ...input } = vector;
        expect(signRenderLink(input)).to.equal(vector.link);
        const split = splitSignedQuery(vector.link.slice(vector.link.indexOf('?') + 1));
        expect(split).to.deep.equal({ signed: vector.signedQuery, signature: vector.signature });
        expect(signatureMatches(vector.signedQuery, vector.signature, vector.signingSecret)).to.equal(true);
        expect(signatureMatches(vector.signedQuery, vector.signature, `${vector.signingSecret}x`)).to.equal(false);
      });

      it('openssl, as the docs run it, gives the signature of the signed query', () => {
        const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', vector.signingSecret, '-r'], { input: vector.signedQuery }).toString();
        expect(out.split(' ')[0]).to.equal(vector.signature);
      });

      it("the docs' Node snippet gives the same query and signature", () => {
        const renderLink = docsNodeRenderLink();
        // The snippet computes expires from its own clock: a vector with an expiry is checked through a fixed clock.
        const expiresIn = vector.expires === undefined ? undefined : 1000;
        const realNow = Date.now;
        Date.now = () => (vector.expires === undefined ? realNow() : (vector.expires - 1000) * 1000);
        try {
          const link = renderLink('https://api', vector.keyId, vector.signingSecret, vector.options, expiresIn);
          expect(link.slice(link.indexOf('?') + 1)).to.equal(`${vector.signedQuery}&signature=${vector.signature}`);
        } finally {
          Date.now = realNow;
        }
      });

      if (vector.expires === undefined && vector.options[0]?.[0] === 'url') {
        it('`viewfinder links sign` prints the same link', () => {
          const args = ['links', 'sign', '--origin', vector.origin, '-k', vector.keyId, '-u', vector.options[0]![1]];
          for (const [name, value] of vector.options.slice(1)) args.push('-o', `${name}=${value}`);
          const out = execFileSync(VIEWFINDER_BIN, args, { env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`, VIEWFINDER_SIGNING_SECRET: vector.signingSecret } }).toString();
          expect(JSON.parse(out).link).to.equal(vector.link);
        });
      }
    });
  }

  for (const vector of webhooks.sign) {
    it(`webhook signature: ${vector.name}`, () => {
      expect(`t=${vector.timestamp},v1=${signatureOf(vector.secret, vector.timestamp, vector.body)}`).to.equal(vector.header);
    });
  }

  for (const vector of webhooks.verify) {
    it(`webhook verification: ${vector.name}`, () => {
      expect(verifySignature(vector.secret, vector.header, vector.body, { now: new Date(vector.now * 1000), toleranceSeconds: vector.toleranceSeconds })).to.equal(vector.valid);
    });
  }
});

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { crdAjv } from '../support/crd-ajv.ts';

/**
 * Every CRD's openAPIV3Schema compiles in ajv's strict mode, which knows JSON Schema and Kubernetes'
 * x-kubernetes-* extensions only: a keyword the API server's strict decoding would refuse fails
 * here, without a cluster.
 */
const REPO = path.join(import.meta.dirname, '..', '..');
const DIRS = ['crds', 'charts/viewfinder/crds'];

type Crd = { metadata: { name: string }; spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: object } }> } };

const compile = (schema: object) => crdAjv().compile(schema);

describe('CRD schemas compile in ajv strict mode', () => {
  for (const dir of DIRS) {
    for (const file of readdirSync(path.join(REPO, dir)).filter((name) => name.endsWith('.yaml')).sort()) {
      const crd = parseYaml(readFileSync(path.join(REPO, dir, file), 'utf8')) as Crd;
      for (const version of crd.spec.versions) {
        it(`${dir}/${file} (${version.name})`, () => {
          expect(() => compile(version.schema.openAPIV3Schema)).to.not.throw();
        });
      }
    }
  }

  describe('catches', () => {
    const apiKeyText = readFileSync(path.join(REPO, 'crds', 'apikey.yaml'), 'utf8');
    const apiKeySchema = (text: string) => (parseYaml(text) as Crd).spec.versions[0]?.schema.openAPIV3Schema as object;

    it('the unquoted comma in a flow mapping that made "for display." a keyword (issue 11)', () => {
      const broken = apiKeyText.replace('description: "The first characters of the key, for display." }', 'description: The first characters of the key, for display. }');
      expect(broken, 'the fixture reproduces the old line').to.not.equal(apiKeyText);
      expect(() => compile(apiKeySchema(broken))).to.throw(/unknown keyword: "for display\."/);
    });

    it('a misspelt keyword', () => {
      expect(() => compile({ type: 'object', properties: { name: { type: 'string', maxLenght: 3 } } })).to.throw(/unknown keyword: "maxLenght"/);
    });

    it('a Kubernetes extension with a value Kubernetes refuses', () => {
      expect(() => compile({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'sett' })).to.throw(/keyword "x-kubernetes-[a-z-]*" value is invalid/);
      expect(() => compile({ type: 'object', 'x-kubernetes-preserve-unknown-fields': false })).to.throw(/keyword "x-kubernetes-[a-z-]*" value is invalid/);
      expect(() => compile({ type: 'string', 'x-kubernetes-validations': [{ rul: 'self != ""' }] })).to.throw(/keyword "x-kubernetes-[a-z-]*" value is invalid/);
    });

    it('an x-kubernetes- keyword that Kubernetes does not have', () => {
      expect(() => compile({ type: 'string', 'x-kubernetes-validation': [{ rule: 'self != ""' }] })).to.throw(/unknown keyword/);
    });
  });
});
